/*
 * docs/configuration.md is generated from the configuration schema (src/cli/configDocs.ts), so it
 * cannot drift: a variable added to src/config/environment.ts without a written meaning, or a page
 * not regenerated after a change, fails here (and so `npm test`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { configurationDoc, ENTRIES } from '../../src/cli/configDocs';
import { envSchema } from '../../src/config/environment';

const PAGE = path.join(__dirname, '..', '..', 'docs', 'configuration.md');
const REGENERATE = 'npx tsx src/cli/configDocs.ts > docs/configuration.md';

describe('docs/configuration.md', () => {
  it('given the configuration schema, then every variable has a meaning written for it, and every meaning has its variable', () => {
    const described = Object.entries(ENTRIES)
      .filter(([, entry]) => entry.meaning.trim() !== '')
      .map(([name]) => name);
    expect(described.sort()).toEqual(Object.keys(envSchema.shape).sort());
  });

  it('given the schema and the written meanings, when the page is generated, then it equals docs/configuration.md', () => {
    const expected = configurationDoc();
    const actual = fs.readFileSync(PAGE, 'utf8');
    if (actual === expected) return;
    const a = actual.split('\n');
    const e = expected.split('\n');
    const line = e.findIndex((l, i) => l !== a[i]);
    const at = line === -1 ? e.length : line;
    throw new Error(
      `docs/configuration.md is out of date (first difference at line ${at + 1}): run \`${REGENERATE}\`.\n` +
        `on disk:   ${a[at] ?? '(end of file)'}\ngenerated: ${e[at] ?? '(end of file)'}`,
    );
  });

  it('lists every variable of the schema on the page', () => {
    const page = fs.readFileSync(PAGE, 'utf8');
    const missing = Object.keys(envSchema.shape).filter((name) => !page.includes(`| \`${name}\``));
    expect(missing).toEqual([]);
  });
});
