/**
 * The plan cache (src/sql/pipeline/statementCache.ts, `queries`) keeps a SELECT's plan for the
 * versions of the tables its names were resolved from (src/sql/pipeline/planCatalog.ts): a skill
 * created leaves the plan of a query that resolved only system names in place, a view redefined,
 * a file replaced or deleted re-plans the queries that named them.
 *
 * The promise: a cached plan gives the same answer as a fresh plan. For generated interleavings of
 * writes that do and do not change what a read resolved (a view created, replaced, altered or
 * dropped; a skill created or deleted; a file uploaded, replaced with other columns, or deleted)
 * and reads of a few fixed texts (each met again and again, so its plan is kept across the writes),
 * every read answers as the same query read afresh: wrapped in a subquery with an alias of its own,
 * a text no cache has met. Each run begins with its view made and read. Kill check: the view look-up noting only `projects`, not `views` (a plan
 * kept across a view's redefinition), is caught at the run count used.
 */
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { givenProject, uniqueName } from '../support/world';
import { expectCaught, propertyRuns, propertySeed } from '../support/seed';
import { methodReplaced } from '../support/killChecks';
import { nameTables, NAME_TABLES } from '../../src/sql/pipeline/planCatalog';

const SEED = propertySeed();
const RUNS = propertyRuns(25);

/** A file's contents: which columns it has (a replacement may change them) and its rows. */
type FileShape = { columns: 'ab' | 'ac' | 'b'; rows: number };
type Op =
  | { kind: 'view'; how: 'create' | 'replace' | 'alter' | 'drop'; source: number }
  | { kind: 'skill'; how: 'create' | 'delete'; which: number }
  | { kind: 'file'; how: 'upload'; shape: FileShape }
  | { kind: 'file'; how: 'delete' }
  | { kind: 'read'; query: number };

/** What a view reads: the project's skills, the file, or information_schema's skills of the project. */
const VIEW_SOURCES = [
  (p: string) => `SELECT name FROM ${p}.skills`,
  (_p: string, file: string) => `SELECT * FROM files.${file}`,
  (p: string) => `SELECT count(*) AS n FROM information_schema.skills WHERE project = '${p}'`,
];

/** The texts read, again and again in a run: a view, a file, system names only, a project's table. */
const QUERIES = [
  (p: string) => `SELECT * FROM ${p}.v`,
  (_p: string, file: string) => `SELECT * FROM files.${file}`,
  (p: string) => `SELECT count(*) AS n FROM information_schema.skills WHERE project = '${p}'`,
  (p: string) => `SELECT name FROM ${p}.skills ORDER BY name`,
  (p: string) => `SELECT count(*) AS n FROM ${p}.v`,
];

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('view' as const),
      how: fc.constantFrom(
        'create' as const,
        'replace' as const,
        'replace' as const,
        'alter' as const,
        'drop' as const,
      ),
      source: fc.nat(VIEW_SOURCES.length - 1),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('skill' as const),
      how: fc.constantFrom('create' as const, 'delete' as const),
      which: fc.nat(2),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.record({
        kind: fc.constant('file' as const),
        how: fc.constant('upload' as const),
        shape: fc.record({
          columns: fc.constantFrom('ab' as const, 'ac' as const, 'b' as const),
          rows: fc.nat(3),
        }),
      }),
      fc.record({ kind: fc.constant('file' as const), how: fc.constant('delete' as const) }),
    ),
  },
  // Reads of the view twice as likely as the others: its redefinitions are the writes most reads depend on.
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('read' as const), query: fc.constantFrom(0, 0, 1, 2, 3, 4, 4) }),
  },
);
/** Every run begins with its view made and read (its plan kept), so that later redefinitions have a plan to meet. */
const ops = fc
  .tuple(fc.constantFrom(0, 2), fc.array(op, { minLength: 4, maxLength: 24 }))
  .map(([source, rest]): Op[] => [
    { kind: 'view', how: 'create', source },
    { kind: 'read', query: 0 },
    ...rest,
  ]);

/**
 * An answer as compared: its columns and rows (as a multiset), or its error. Names are compared
 * without case: DuckDB's star over a subquery names `SELECT name FROM p.skills`'s column as the
 * table spells it (`NAME`), with or without caches.
 */
const shape = (a: SqlAnswer) =>
  a.type === 'table'
    ? {
        column_names: a.column_names!.map((n) => n.toLowerCase()),
        column_types: a.column_types,
        rows: a.data!.map((r) => JSON.stringify(r)).sort(),
      }
    : { error: a.error_code };

const csvOf = (s: FileShape) => {
  const header = s.columns === 'ab' ? 'a,b' : s.columns === 'ac' ? 'a,c' : 'b';
  const rows = Array.from({ length: s.rows + 1 }, (_, i) => (s.columns === 'b' ? `x${i}` : `${i},x${i}`));
  return `${header}\n${rows.join('\n')}\n`;
};

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-cache-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
let fresh = 0;

describe.each(storeKinds)('a cached plan answers as a fresh one (event store: %s)', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  /** Runs the writes and reads in order; each read must answer as the same query read afresh. */
  const readsAnswerAsFresh = async (sequence: Op[]) => {
    const { name: p } = await givenProject(t);
    const file = uniqueName('pcf');
    const seen: string[] = [];
    for (const o of sequence) {
      switch (o.kind) {
        case 'view': {
          const query = VIEW_SOURCES[o.source]!(p, file);
          const sql =
            o.how === 'create'
              ? `CREATE VIEW ${p}.v AS (${query})`
              : o.how === 'replace'
                ? `CREATE OR REPLACE VIEW ${p}.v AS (${query})`
                : o.how === 'alter'
                  ? `ALTER VIEW ${p}.v AS (${query})`
                  : `DROP VIEW IF EXISTS ${p}.v`;
          // A view of a missing file, or a create over an existing view, is refused: a write that changes nothing.
          await querySql(t, sql);
          seen.push(sql);
          break;
        }
        case 'skill':
          if (o.how === 'create')
            await t.http
              .post(`/api/projects/${p}/skills`)
              .send({ skill: { name: `s${o.which}`, type: 'custom', params: {} } });
          else await t.http.delete(`/api/projects/${p}/skills/s${o.which}`);
          seen.push(`skill ${o.how} s${o.which}`);
          break;
        case 'file':
          if (o.how === 'upload') {
            const local = path.join(scratch, `${file}.csv`);
            fs.writeFileSync(local, csvOf(o.shape));
            await t.http.put(`/api/files/${file}`).attach('file', local).expect(200);
            seen.push(`file upload ${JSON.stringify(o.shape)}`);
          } else {
            await t.http.delete(`/api/files/${file}`);
            seen.push('file delete');
          }
          break;
        case 'read': {
          const q = QUERIES[o.query]!(p, file);
          const cached = await querySql(t, q);
          const afresh = await querySql(t, `SELECT * FROM (${q}) AS fresh_${++fresh}`);
          expect({ seen, q, answer: shape(cached) }).toEqual({ seen, q, answer: shape(afresh) });
          seen.push(q);
          break;
        }
      }
    }
  };

  it('every read answers as the same query read afresh, across writes that do and do not change what it resolved', async () => {
    await fc.assert(fc.asyncProperty(ops, readsAnswerAsFresh), { seed: SEED, numRuns: RUNS });
  }, 600_000);

  it('kill check: a view look-up that notes only `projects` (its plan kept across a redefinition) is caught', async () => {
    const undo = methodReplaced(
      nameTables,
      'of',
      (original) => (lookup) => (lookup === 'view' ? ['projects'] : original(lookup)),
    );
    try {
      await expectCaught(fc.asyncProperty(ops, readsAnswerAsFresh), { seed: SEED, numRuns: RUNS });
    } finally {
      undo();
    }
  }, 600_000);

  it('the tables the look-ups note are tables of the read model', async () => {
    const tables = new Set(
      (
        await t.running.ctx.duck.query(`SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'`)
      ).map((r) => String((r as Record<string, unknown>).table_name)),
    );
    expect(
      Object.values(NAME_TABLES)
        .flat()
        .filter((table) => !tables.has(table)),
    ).toEqual([]);
  });
});
