import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compiledParser } from '../../src/sql/statements/compiledParser';

/** A grammar of its own per test (a word only it accepts), so no test meets another's cached file. */
const grammarAccepting = (word: string) => `start = "${word}" { return { said: "${word}" }; }`;

describe('a SQL grammar compiled once and loaded from the cache', () => {
  const dir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-parser-cache-'));

  it('given an empty cache, when a grammar is compiled twice, then the second parser is loaded from the one file the first wrote and parses alike', () => {
    const cache = dir();
    const word = `w${crypto.randomBytes(4).toString('hex')}`;
    const first = compiledParser(grammarAccepting(word), cache);
    const files = fs.readdirSync(cache);
    expect(files).toHaveLength(1);
    const second = compiledParser(grammarAccepting(word), cache);
    expect(fs.readdirSync(cache)).toEqual(files);
    expect(second.parse(word)).toEqual({ said: word });
    expect(first.parse(word)).toEqual(second.parse(word));
    expect(() => second.parse(`${word}!`)).toThrow();
  });

  it('given a changed grammar, when compiled, then it gets a file of its own and the old parser is not used', () => {
    const cache = dir();
    compiledParser(grammarAccepting('alpha'), cache);
    const changed = compiledParser(grammarAccepting('beta'), cache);
    expect(fs.readdirSync(cache)).toHaveLength(2);
    expect(changed.parse('beta')).toEqual({ said: 'beta' });
    expect(() => changed.parse('alpha')).toThrow();
  });

  it('given a torn cached file, when the grammar is compiled, then it is compiled again and the file rewritten', () => {
    const word = `t${crypto.randomBytes(4).toString('hex')}`;
    const first = dir();
    compiledParser(grammarAccepting(word), first);
    const [file] = fs.readdirSync(first);
    // The torn copy lives at a path this process never loaded: jest keeps what it has read of a
    // path (a module registry reset leaves that), so tearing the loaded file itself proved nothing.
    const cache = dir();
    fs.writeFileSync(path.join(cache, file!), 'module.exports = { parse: (');
    const again = compiledParser(grammarAccepting(word), cache);
    expect(again.parse(word)).toEqual({ said: word });
    expect(fs.readFileSync(path.join(cache, file!), 'utf8')).toContain('peg$parse');
  });

  it('given a cache it cannot write, when a grammar is compiled, then it is compiled in memory', () => {
    const blocked = path.join(dir(), 'a-file-not-a-directory');
    fs.writeFileSync(blocked, '');
    const parser = compiledParser(grammarAccepting('gamma'), blocked);
    expect(parser.parse('gamma')).toEqual({ said: 'gamma' });
  });
});
