/**
 * The customer's database is sacred (issue 57, defects 1 and 3): what we run there is exactly what
 * was asked. A `?`, `$1` or `:name` inside a string literal is text, not a placeholder; a string
 * holding backslashes reads the same on a MariaDB whatever its sql_mode; a native query's text goes
 * to its database byte for byte, over every door.
 *
 * Property (a fresh seed each run, bounded runs): generated strings (quotes, `?`, `$1`, `:name`, backslashes,
 * `%`, newlines, any Unicode) written into a real PostgreSQL and a real MariaDB with VALUES, with
 * INSERT … SELECT and with bound parameters are read back byte-identical by the database's own
 * client; and a pushed-down `WHERE v = <literal>` answers what DuckDB answers over the same rows.
 * Kill check: the same property over the old driver's regex translation (`?` → `$n` anywhere)
 * finds a counterexample at this count.
 */
import fc from 'fast-check';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { startDoors } from '../support/doors';
import { freshMariaData, freshPostgresData, rowsInExternal, type ExternalEngine } from '../support/external';
import { lit } from '../support/hostile';
import { givenDatabase, uniqueName } from '../support/world';
import { bindMysql, MYSQL_DIALECT, POSTGRES_DIALECT } from '../../src/integrations/dialects';
import { propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const RUNS = Number(process.env.PROMISE_RUNS ?? 12);

/** Text a client may store: placeholders' spellings, quotes, escapes, wildcards, any code point (no NUL: neither engine stores one in text). */
const storedText = fc
  .string({
    unit: fc.oneof(
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          '?',
          '$1',
          '$$',
          ':name',
          '@v',
          "'",
          '"',
          '`',
          '\\',
          '%',
          '_',
          '\n',
          '\r',
          '--',
          '/*',
          '?|',
          '::',
        ),
      },
      { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
    ),
    maxLength: 16,
  })
  .filter((s) => !s.includes('\u0000'));

type Source = { name: string; parameters: Record<string, unknown>; drop: () => Promise<void> };

const setUp = async (engine: ExternalEngine): Promise<Source> =>
  engine === 'postgres'
    ? freshPostgresData(['CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT)'])
    : freshMariaData([
        'CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin)',
      ]);

const stored = async (engine: ExternalEngine, database: string, id: number) =>
  (await rowsInExternal(engine, database, `SELECT v FROM t WHERE id = ${id}`)).map((r) => r[0]);

describe('text sent to a customer database is what was asked (issue 57)', () => {
  describe.each(storeKinds)('on the %s store', (store) => {
    let t: TestApp;
    const sources: Partial<Record<ExternalEngine, Source & { registered: string }>> = {};
    beforeAll(async () => {
      t = await startTestApp(store);
      for (const engine of ['postgres', 'mysql'] as const) {
        const source = await setUp(engine);
        const registered = uniqueName(engine === 'postgres' ? 'extpg' : 'extmy');
        await givenDatabase(t, { name: registered, engine, parameters: source.parameters });
        sources[engine] = { ...source, registered };
      }
    });
    afterAll(async () => {
      await t?.dispose();
      for (const s of Object.values(sources)) await s?.drop();
    });

    it.each(['postgres', 'mysql'] as const)(
      '%s: a ? inside a literal is stored and matched as written, before and beside a bound parameter',
      async (engine) => {
        const { registered, name } = sources[engine]!;
        expect(await querySql(t, `INSERT INTO ${registered}.t (id, v) VALUES (701, 'a?b?c')`)).toMatchObject({
          type: 'ok',
          affected_rows: 1,
        });
        expect(await stored(engine, name, 701)).toEqual(['a?b?c']);
        expect(await querySql(t, `INSERT INTO ${registered}.t (id, v) VALUES (702, 'what?')`)).toMatchObject({
          type: 'ok',
        });
        const found = await querySql(t, `SELECT id FROM ${registered}.t WHERE v = 'what?'`);
        expect(found).toMatchObject({ type: 'table', data: [[702]] });
        // A literal `?` before a real placeholder does not shift the numbering.
        const both = await querySql(
          t,
          `SELECT id, v FROM ${registered}.t WHERE v = 'a?b?c' OR id = :id ORDER BY id`,
          {
            params: { id: 702 },
          },
        );
        expect(both).toMatchObject({
          type: 'table',
          data: [
            [701, 'a?b?c'],
            [702, 'what?'],
          ],
        });
      },
    );

    it('postgres: a native query goes through byte for byte ($$ strings, ?, version()) on HTTP and both wire doors', async () => {
      const { registered } = sources.postgres!;
      const native = `SELECT '?' AS a, $$?$$ AS b, version() AS v, current_database() AS d`;
      const over = await querySql(t, `SELECT * FROM ${registered} (${native})`);
      expect(over).toMatchObject({ type: 'table', column_names: ['a', 'b', 'v', 'd'] });
      expect(over.data![0]!.slice(0, 2)).toEqual(['?', '?']);
      expect(String(over.data![0]![2])).toMatch(/^PostgreSQL \d+/);
      expect(over.data![0]![3]).toBe(sources.postgres!.name);
      const doors = await startDoors(t);
      try {
        const [mysqlRows] = await doors.my.query({
          sql: `SELECT * FROM ${registered} (SELECT version() AS v, '?' AS q)`,
          rowsAsArray: true,
        });
        expect(String((mysqlRows as unknown[][])[0]![0])).toMatch(/^PostgreSQL \d+/);
        expect((mysqlRows as unknown[][])[0]![1]).toBe('?');
        const pgRows = await doors.pgc.query({
          text: `SELECT * FROM ${registered} (SELECT version() AS v, "q" FROM (SELECT 'a\\b' AS "q") x)`,
          rowMode: 'array',
        });
        const [first] = pgRows.rows as unknown[][];
        expect(String(first![0])).toMatch(/^PostgreSQL \d+/);
        expect(first![1]).toBe('a\\b');
      } finally {
        await doors.close();
      }
    });

    it('mysql: a native query goes through as written, and a backslash reads as the customer wrote it', async () => {
      const { registered } = sources.mysql!;
      const over = await querySql(t, `SELECT * FROM ${registered} (SELECT VERSION() AS v, 'x?' AS q)`);
      expect(over).toMatchObject({ type: 'table', column_names: ['v', 'q'] });
      expect(String(over.data![0]![0])).toMatch(/MariaDB|^\d+\.\d+/);
      expect(String(over.data![0]![0])).not.toMatch(/mindledger/);
      expect(over.data![0]![1]).toBe('x?');
    });

    if (store === 'sqlite')
      it.each(['postgres', 'mysql'] as const)(
        '%s: generated strings round-trip byte-identical through VALUES, INSERT … SELECT and parameters; pushed-down WHERE answers as DuckDB does',
        async (engine) => {
          const { registered, name } = sources[engine]!;
          let id = 10_000;
          await fc.assert(
            fc.asyncProperty(storedText, storedText, async (a, b) => {
              const ids = [++id, ++id, ++id];
              const written = [
                await querySql(t, `INSERT INTO ${registered}.t (id, v) VALUES (${ids[0]}, ${lit(a)})`),
                await querySql(t, `INSERT INTO ${registered}.t (id, v) SELECT ${ids[1]}, ${lit(b)}`),
                await querySql(t, `INSERT INTO ${registered}.t (id, v) VALUES (${ids[2]}, :v)`, {
                  params: { v: a },
                }),
              ];
              for (const w of written)
                expect({ ...w, context: undefined }).toEqual({
                  type: 'ok',
                  affected_rows: 1,
                  context: undefined,
                });
              expect(await stored(engine, name, ids[0]!)).toEqual([a]);
              expect(await stored(engine, name, ids[1]!)).toEqual([b]);
              expect(await stored(engine, name, ids[2]!)).toEqual([a]);
              // Pushed down whole (one database) and fetched to join a local table: both as DuckDB answers.
              const pushed = await querySql(
                t,
                `SELECT id FROM ${registered}.t WHERE v = ${lit(a)} AND id IN (${ids.join(', ')}) ORDER BY id`,
              );
              const local = await querySql(
                t,
                `SELECT id FROM (SELECT * FROM (VALUES (${ids[0]}, ${lit(a)}), (${ids[1]}, ${lit(b)}), (${ids[2]}, ${lit(a)})) AS x(id, v)) AS y WHERE v = ${lit(a)} ORDER BY id`,
              );
              expect(local.type).toBe('table');
              expect(pushed).toMatchObject({ type: 'table', data: local.data });
            }),
            { seed: SEED, numRuns: propertyRuns(RUNS) },
          );
        },
        120_000,
      );
  });

  describe('kill check: the property catches the old regex translation at this count', () => {
    // The old PostgreSQL driver numbered every `?` of the text; the old MySQL path let mysql2
    // format every `?` of the text. Either one turns a generated literal into something else.
    const oldPostgres = (sql: string) => {
      let i = 0;
      return sql.replace(/\?/g, () => `$${++i}`);
    };
    it('a generated literal holding ? is altered by the old rewrite and kept by the new', () => {
      let caught = 0;
      fc.assert(
        fc.property(storedText, (a) => {
          const text = `INSERT INTO t (id, v) VALUES (1, ${POSTGRES_DIALECT.literal(a)})`;
          if (oldPostgres(text) !== text) caught++;
          expect(bindMysql(`INSERT INTO t (id, v) VALUES (?, ${MYSQL_DIALECT.literal(a)})`, [1])).toBe(
            `INSERT INTO t (id, v) VALUES (1, ${MYSQL_DIALECT.literal(a)})`,
          );
        }),
        { seed: SEED, numRuns: propertyRuns(RUNS * 2) },
      );
      expect(caught).toBeGreaterThan(0);
    });
  });
});
