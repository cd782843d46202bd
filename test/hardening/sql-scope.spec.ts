/**
 * The SQL sandbox and CTE scoping. A CTE name used to count as a CTE wherever it appeared in the
 * query, so `SELECT * FROM (WITH events AS (SELECT 1) SELECT 1) x, events` left the outer `events`
 * bare and DuckDB read the physical main.events. A query may reach only MindsDB names, CTEs in
 * scope and the allowed table functions.
 */
import fc from 'fast-check';
import { querySql, startTestApp, type SqlAnswer, type TestApp } from '../support/app';

/**
 * Names a generated query defines and references. Each also exists in DuckDB's own catalog:
 * main.events and main.projects are projection tables, duckdb_tables and sqlite_master are system
 * views, and the test creates main.cte_a and main.cte_b holding the marker below.
 */
const NAMES = ['events', 'projects', 'cte_a', 'cte_b', 'duckdb_tables', 'sqlite_master'] as const;
const PHYSICAL_MARKER = 'PHYSICAL-ROW-MARKER';

type Q =
  | { k: 'lit' }
  | { k: 'ref'; name: string }
  | { k: 'with'; defs: { name: string; body: Q; recursive: boolean }[]; body: Q }
  | { k: 'sub'; q: Q }
  | { k: 'union'; l: Q; r: Q }
  | { k: 'scalar'; q: Q }
  | { k: 'lateral'; q: Q }
  | { k: 'join'; l: Q; r: Q }
  | { k: 'exists'; l: Q; r: Q };

const name = fc.constantFrom(...NAMES);
const { query } = fc.letrec<{ query: Q }>((tie) => ({
  query: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant<Q>({ k: 'lit' }),
    name.map((n): Q => ({ k: 'ref', name: n })),
    fc
      .record({
        // Names are unique within one WITH (a duplicate is DuckDB's syntax error).
        defs: fc.uniqueArray(fc.record({ name, body: tie('query'), recursive: fc.boolean() }), {
          minLength: 1,
          maxLength: 3,
          selector: (d) => d.name,
        }),
        body: tie('query'),
      })
      .map((w): Q => ({ k: 'with', ...w })),
    tie('query').map((q): Q => ({ k: 'sub', q })),
    fc.record({ l: tie('query'), r: tie('query') }).map((x): Q => ({ k: 'union', ...x })),
    tie('query').map((q): Q => ({ k: 'scalar', q })),
    tie('query').map((q): Q => ({ k: 'lateral', q })),
    fc.record({ l: tie('query'), r: tie('query') }).map((x): Q => ({ k: 'join', ...x })),
    fc.record({ l: tie('query'), r: tie('query') }).map((x): Q => ({ k: 'exists', ...x })),
  ),
}));

/**
 * The SQL text (one column `v`) and, by DuckDB's scoping rules, what it answers: the values, or the
 * names referenced out of scope. Every literal and CTE carries its own tag, so an answer also
 * shows which definition a name bound to (shadowing).
 */
const compile = (root: Q) => {
  let tags = 0;
  const outOfScope = new Set<string>();
  type Env = ReadonlyMap<string, string[]>;
  const go = (q: Q, env: Env): { sql: string; values: string[] } => {
    switch (q.k) {
      case 'lit': {
        const tag = `t${tags++}`;
        return { sql: `SELECT '${tag}' AS v`, values: [tag] };
      }
      case 'ref': {
        const values = env.get(q.name);
        if (!values) outOfScope.add(q.name);
        return { sql: `SELECT v FROM ${q.name}`, values: values ?? [] };
      }
      case 'with': {
        let scope: Env = env;
        const parts: string[] = [];
        const recursive = q.defs.some((d) => d.recursive);
        for (const d of q.defs) {
          if (d.recursive) {
            // Its recursive side sees the CTE itself; UNION (not ALL) makes it stop at one row.
            const tag = `t${tags++}`;
            parts.push(`${d.name} AS (SELECT '${tag}' AS v UNION SELECT v FROM (SELECT v FROM ${d.name}) s)`);
            scope = new Map([...scope, [d.name, [tag]]]);
          } else {
            const body = go(d.body, scope);
            // Under WITH RECURSIVE, DuckDB makes every CTE whose body is a UNION recursive: a
            // plain SELECT around the body keeps this one what the model says it is.
            parts.push(`${d.name} AS (${recursive ? `SELECT v FROM (${body.sql}) AS d` : body.sql})`);
            scope = new Map([...scope, [d.name, body.values]]);
          }
        }
        const body = go(q.body, scope);
        const text = q.body.k === 'with' ? `SELECT v FROM (${body.sql}) AS w` : body.sql;
        return {
          sql: `WITH ${recursive ? 'RECURSIVE ' : ''}${parts.join(', ')} ${text}`,
          values: body.values,
        };
      }
      case 'sub': {
        const inner = go(q.q, env);
        return { sql: `SELECT v FROM (${inner.sql}) AS s`, values: inner.values };
      }
      case 'union': {
        const l = go(q.l, env);
        const r = go(q.r, env);
        return { sql: `(${l.sql}) UNION ALL (${r.sql})`, values: [...l.values, ...r.values] };
      }
      case 'scalar': {
        const inner = go(q.q, env);
        const min = [...inner.values].sort()[0];
        return {
          sql: `SELECT (SELECT min(v) FROM (${inner.sql}) AS s) AS v`,
          values: min === undefined ? [] : [min],
        };
      }
      case 'lateral': {
        const inner = go(q.q, env);
        return {
          sql: `SELECT l.v FROM (SELECT 1 AS one) AS o, LATERAL (${inner.sql}) AS l`,
          values: inner.values,
        };
      }
      case 'join': {
        const l = go(q.l, env);
        const r = go(q.r, env);
        return {
          sql: `SELECT a.v FROM (${l.sql}) AS a, (${r.sql}) AS b`,
          values: l.values.flatMap((v) => r.values.map(() => v)),
        };
      }
      case 'exists': {
        const l = go(q.l, env);
        const r = go(q.r, env);
        return {
          sql: `SELECT v FROM (${l.sql}) AS a WHERE EXISTS (${r.sql})`,
          values: r.values.length > 0 ? l.values : [],
        };
      }
    }
  };
  const { sql, values } = go(root, new Map());
  return { sql, values: [...values].sort(), outOfScope: [...outOfScope] };
};

describe('the SQL sandbox resolves CTE names by scope', () => {
  let t: TestApp;
  const sql = (q: string) => querySql(t, q);

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    // Physical tables under two of the generated names: a query that reaches one shows the marker.
    for (const table of ['cte_a', 'cte_b'])
      await t.running.ctx.duck.writer.run(`CREATE TABLE main.${table} AS SELECT '${PHYSICAL_MARKER}' AS v`);
  });
  afterAll(() => t.dispose());

  const expectUnknown = (answer: SqlAnswer, ...names: string[]) => {
    expect(answer).toMatchObject({ type: 'error', error_code: 1146 });
    expect(names.some((n) => answer.error_message!.includes(n))).toBe(true);
  };

  it('given a CTE defined inside a subquery, when the outer query names it, then it is an unknown table (not main.events)', async () => {
    expectUnknown(await sql('SELECT * FROM (WITH events AS (SELECT 1) SELECT 1) x, events'), 'events');
    expectUnknown(
      await sql('(WITH cte_a AS (SELECT 1 AS v) SELECT v FROM cte_a) UNION ALL (SELECT v FROM cte_a)'),
      'cte_a',
    );
    expectUnknown(
      await sql('SELECT (SELECT 1 FROM (WITH projects AS (SELECT 1) SELECT 1) s), * FROM projects'),
      'projects',
    );
  });

  it('given a CTE that names itself or a later sibling, when DuckDB would read the physical table there, then it is an unknown table', async () => {
    expectUnknown(await sql('WITH events AS (SELECT * FROM events) SELECT * FROM events'), 'events');
    expectUnknown(
      await sql('WITH cte_a AS (SELECT v FROM cte_b), cte_b AS (SELECT 1 AS v) SELECT * FROM cte_a'),
      'cte_b',
    );
    // The non-recursive side of a recursive CTE does not see the CTE either.
    expectUnknown(
      await sql('WITH RECURSIVE cte_a AS (SELECT v FROM cte_a UNION SELECT 1 AS v) SELECT * FROM cte_a'),
      'cte_a',
    );
  });

  it('given CTEs in scope, when they are used, shadowed, qualified and recursive, then they answer their own rows', async () => {
    expect(
      (
        await sql(
          'WITH RECURSIVE n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT sum(i) AS s FROM n',
        )
      ).data,
    ).toEqual([[15]]);
    expect(
      (await sql("WITH skills AS (SELECT 'mine' AS v) SELECT skills.v, s2.v FROM skills, skills AS s2")).data,
    ).toEqual([['mine', 'mine']]);
    expect(
      (
        await sql(
          "WITH cte_a AS (SELECT 'outer' AS v) SELECT * FROM (WITH cte_a AS (SELECT 'inner' AS v) SELECT v FROM cte_a) i, cte_a",
        )
      ).data,
    ).toEqual([['inner', 'outer']]);
    expect(
      (await sql('WITH a AS (SELECT 1 AS v), b AS (SELECT v + 1 AS v FROM a) SELECT * FROM b')).data,
    ).toEqual([[2]]);
    const star = await sql('WITH events AS MATERIALIZED (SELECT 7 AS v) SELECT * FROM events');
    expect(star).toMatchObject({ type: 'table', column_names: ['v'], data: [[7]] });
  });

  it.each([
    ['SELECT * FROM (SHOW TABLES)'],
    ['FROM (SHOW ALL TABLES)'],
    ['SELECT * FROM (DESCRIBE mindsdb.skills)'],
    ['SELECT * FROM (SUMMARIZE SELECT 1)'],
  ])('refuses the DuckDB catalog through a subquery: %s', async (q) => {
    const answer = await sql(q);
    expect(answer).toMatchObject({ type: 'error', error_code: 1227 });
    expect(JSON.stringify(answer)).not.toMatch(/_mindledger_checkpoint|"events"|duckdb/);
  });

  it.each([
    ['SELECT * FROM duckdb_tables', 'duckdb_tables'],
    ['SELECT * FROM sqlite_master', 'sqlite_master'],
    ["SELECT * FROM '/etc/passwd'", '/etc/passwd'],
    ["WITH x AS (SELECT 1) SELECT * FROM 'data/projections.duckdb'", 'projections.duckdb'],
    ['SELECT * FROM _mindledger_checkpoint', '_mindledger_checkpoint'],
  ])('reads no physical name: %s', async (q, n) => {
    expectUnknown(await sql(q), n);
  });

  it('given generated scoping shapes, when each runs, then it answers the CTEs in scope or names the one out of scope, never a physical table', async () => {
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const { sql: text, values, outOfScope } = compile(q);
        const answer = await sql(text);
        expect(JSON.stringify(answer)).not.toContain(PHYSICAL_MARKER);
        if (outOfScope.length > 0) {
          expect(answer.type).toBe('error');
          expect(answer.error_code).toBe(1146);
          expect(outOfScope.some((n) => answer.error_message!.includes(`mindsdb.${n}`))).toBe(true);
        } else {
          expect(answer.type).toBe('table');
          expect(answer.column_names).toEqual(['v']);
          expect(answer.data!.map((r) => r[0]).sort()).toEqual(values);
        }
      }),
      { seed: 20261123, numRuns: 300, endOnFailure: true },
    );
  }, 120_000);
});
