/**
 * How an upload's format is told: a table's extension wins over its first bytes; a document is
 * told by its extension, or without one by its first bytes (`%PDF-`, an HTML doctype).
 */
import { detectFormat } from '../../src/files/load';

const bytes = (text: string) => Buffer.from(text, 'latin1');

describe('telling documents from tables', () => {
  it.each([
    ['report.pdf', 'anything', 'pdf'],
    ['memo.DOCX', 'PK\u0003\u0004', 'docx'],
    ['page.htm', '<p>x</p>', 'html'],
    ['notes.markdown', '# x', 'md'],
    ['notes.txt', 'a,b\n1,2\n', 'txt'],
    [null, '%PDF-1.7\n', 'pdf'],
    ['upload', '<!DOCTYPE html><html>', 'html'],
    [null, '  <html><body>', 'html'],
    ['data.csv', '<!doctype html>', 'csv'],
    ['data.json', '%PDF-', 'json'],
    [null, 'PK\u0003\u0004 a zip without a name', 'csv'],
    [null, 'a,b\n1,2\n', 'csv'],
  ] as const)('%s starting %j is %s', (name, head, format) => {
    expect(detectFormat(name, bytes(head))).toBe(format);
  });
});
