/**
 * A SELECT the service has not seen is parsed by DuckDB, its table names resolved, and printed
 * for DuckDB to run (src/sql/pipeline/ast.ts, `printSelect`). When name resolution changed nothing
 * but the names of table references (information_schema's tables, a project's), the text run is
 * the client's own with those names replaced, not DuckDB's print of the tree: a trip to DuckDB's
 * threads less (issue 62, the SQL endpoint's overhead over DuckDB in process).
 *
 * The promise: whatever `printSelect` answers parses to the same tree as DuckDB's own print of the
 * statement (query locations aside), so DuckDB runs the query that was planned. Generated SELECTs
 * (filters, joins, aggregates, windows, literals beyond ASCII before the names) name their tables
 * in several written forms (bare, qualified, quoted, three parts, blanks around the dots), renamed
 * to names that need quoting; some also have an alias set (a change other than a name, which DuckDB
 * must print). Kill checks: new names written unquoted, and a change other than a name left out of
 * the text, are caught by the same property.
 */
import fc from 'fast-check';
import { DuckDBPreparedStatement } from '@duckdb/node-api';
import { parseSelect, printSelect, walk, type AstNode } from '../../src/sql/pipeline/ast';
import { quoteIdent } from '../../src/shared/quoting';
import { anySelect, fromClause, generatedTable } from '../support/generatedSql';
import { inMemoryConnection } from '../support/memoryDuck';
import { expectCaught, propertyRuns, propertySeed } from '../support/seed';

const SEED = propertySeed();
const RUNS = propertyRuns(60);

/** How a query names its tables: each written form with the name parts DuckDB reads from it. */
const WRITTEN: readonly { text: string }[] = [
  { text: 't1' },
  { text: 'information_schema.events' },
  { text: '"Q"."x y"' },
  { text: 'cat . sch . tbl' },
  { text: 'Info."Events"' },
];

/** What name resolution puts in their place (`readLocally`: a schema, or none, and a table). */
const RESOLVED: readonly (readonly [schema: string, table: string])[] = [
  ['mdb_information_schema', 'EVENTS'],
  ['mdb_project_p', 'skills'],
  ['', 'x y'],
  ['s', 'My"T'],
  ['', 'é t'],
  ['main', 'select'],
];

type Case = {
  sql: string;
  /** Per table reference met, the resolved name it gets (by index into RESOLVED, cycling). */
  renames: number[];
  /** Also set an alias on the first table reference: a change DuckDB has to print. */
  alias: boolean;
};

const cases: fc.Arbitrary<Case> = fc
  .tuple(generatedTable(3), generatedTable(3))
  .chain(([a, b]) =>
    fc.record({
      query: fromClause(
        { table: 'files.<a>', columns: a.columns },
        { table: 'files.<b>', columns: b.columns },
      ).chain(anySelect),
      written: fc.tuple(fc.constantFrom(...WRITTEN), fc.constantFrom(...WRITTEN)),
      nested: fc.boolean(),
      renames: fc.array(fc.nat(RESOLVED.length - 1), { minLength: 2, maxLength: 2 }),
      alias: fc.boolean(),
    }),
  )
  .map(({ query, written, nested, renames, alias }) => {
    const sql = query.sql.split('files.<a>').join(written[0].text).split('files.<b>').join(written[1].text);
    // Text beyond ASCII before the names: DuckDB locates them in bytes of UTF-8.
    return { sql: nested ? `SELECT 'é€' AS zz, q.* FROM (${sql}) AS q` : sql, renames, alias };
  });

/** Every table reference of a tree, in the order met. */
const tablesOf = async (statement: AstNode) => {
  const found: AstNode[] = [];
  await walk(statement, (n) => {
    if (n.type === 'BASE_TABLE') found.push(n);
  });
  return found;
};

/** A tree without its query locations (a text and its print place the same nodes differently). */
const withoutLocations = (tree: unknown): unknown =>
  JSON.parse(JSON.stringify(tree, (key, value: unknown) => (key === 'query_location' ? undefined : value)));

const connection = inMemoryConnection();

/** The statement of `drawn` parsed, its tables renamed as name resolution renames them (and an alias set). */
const resolved = async (drawn: Case) => {
  const statement = await parseSelect(connection(), drawn.sql);
  const tables = await tablesOf(statement);
  tables.forEach((table, i) => {
    const [schema, name] = RESOLVED[drawn.renames[i % drawn.renames.length]!]!;
    Object.assign(table, { catalog_name: '', schema_name: schema, table_name: name });
  });
  return { statement, tables };
};

/** Trips DuckDB makes for `work` (DuckDB's print is one: a prepared statement run). */
const tripsOf = async <T>(work: () => Promise<T>) => {
  const run = jest.spyOn(DuckDBPreparedStatement.prototype, 'run');
  try {
    const value = await work();
    return { value, trips: run.mock.calls.length };
  } finally {
    run.mockRestore();
  }
};

/** Whether `printed` parses to the tree DuckDB's own print of `statement` parses to. */
const parsesAsPlanned = async (statement: AstNode, printed: string) => {
  // A copy is not a tree parseSelect made: DuckDB prints it.
  const byDuckDb = await printSelect(connection(), structuredClone(statement));
  const [ours, theirs] = [
    await parseSelect(connection(), printed),
    await parseSelect(connection(), byDuckDb),
  ];
  expect(withoutLocations(ours)).toEqual(withoutLocations(theirs));
  return true;
};

const property = (print: (drawn: Case) => Promise<{ statement: AstNode; printed: string }>) =>
  fc.asyncProperty(cases, async (drawn) => {
    const { statement, printed } = await print(drawn);
    return parsesAsPlanned(statement, printed);
  });

/** What the service does: resolve, then print. */
const printResolved = async (drawn: Case) => {
  const { statement, tables } = await resolved(drawn);
  if (drawn.alias) tables[0]!.alias = 'renamed_alias';
  return { statement, printed: await printSelect(connection(), statement) };
};

describe('printing a SELECT whose only change is its tables’ names (endpoint overhead, issue 62)', () => {
  it('gives the client’s text with the new names, without a trip to DuckDB', async () => {
    const sql =
      'SELECT TYPE, count(*) AS n, count(DISTINCT STREAM) AS streams, max(GLOBAL_POSITION) AS last FROM information_schema.events GROUP BY TYPE HAVING count(*) > -1 ORDER BY TYPE';
    const { statement } = await resolved({ sql, renames: [0], alias: false });
    const { value, trips } = await tripsOf(() => printSelect(connection(), statement));
    expect(trips).toBe(0);
    expect(value).toBe(sql.replace('information_schema.events', 'mdb_information_schema.EVENTS'));
    // Beyond ASCII before the name, blanks around its dots, a quoted part, a keyword as the new name.
    const spaced = `SELECT 'é€', x FROM cat . sch . "T" JOIN u USING (x)`;
    const renamed = await resolved({ sql: spaced, renames: [5, 2], alias: false });
    const again = await tripsOf(() => printSelect(connection(), renamed.statement));
    expect(again.trips).toBe(0);
    expect(again.value).toBe(`SELECT 'é€', x FROM main."select" JOIN "x y" USING (x)`);
  });

  it('leaves to DuckDB a tree changed otherwise (an alias), a text with a comment or a `;`, and a tree of its own', async () => {
    for (const sql of [
      'SELECT * FROM t1 /* a comment */',
      'SELECT * FROM t1 -- a comment',
      'SELECT * FROM t1;',
    ]) {
      const { statement } = await resolved({ sql, renames: [0], alias: false });
      const { value, trips } = await tripsOf(() => printSelect(connection(), statement));
      expect(trips).toBe(1);
      expect(value).toBe('SELECT * FROM mdb_information_schema.EVENTS');
    }
    const { statement, tables } = await resolved({ sql: 'SELECT 1 FROM t1', renames: [0], alias: false });
    tables[0]!.alias = 'e';
    const { value, trips } = await tripsOf(() => printSelect(connection(), statement));
    expect(trips).toBe(1);
    expect(value).toBe('SELECT 1 FROM mdb_information_schema.EVENTS AS e');
    const own = (await resolved({ sql: 'SELECT 1 FROM t1', renames: [0], alias: false })).statement;
    const copy = await tripsOf(() => printSelect(connection(), structuredClone(own)));
    expect(copy.trips).toBe(1);
  });

  it('prints every resolved SELECT as a text that parses to the tree planned', async () => {
    // DuckDB prints only the trees with an alias set; the others are the client's text renamed.
    const printedAsResolved = async (drawn: Case) => {
      const { statement, tables } = await resolved(drawn);
      if (drawn.alias) tables[0]!.alias = 'renamed_alias';
      const { value, trips } = await tripsOf(() => printSelect(connection(), statement));
      expect(trips).toBe(drawn.alias ? 1 : 0);
      return { statement, printed: value };
    };
    await fc.assert(property(printedAsResolved), { seed: SEED, numRuns: RUNS });
  });

  it('kill check: new names written unquoted are caught by the same property', async () => {
    await expectCaught(
      property(async (drawn) => {
        const { statement, printed } = await printResolved({ ...drawn, alias: false });
        const names = RESOLVED.flatMap(([schema, table]) => [schema, table]).filter(Boolean);
        return { statement, printed: names.reduce((text, n) => text.split(quoteIdent(n)).join(n), printed) };
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it('kill check: a change besides the names left out of the text is caught by the same property', async () => {
    await expectCaught(
      property(async (drawn) => {
        const { statement, tables } = await resolved(drawn);
        const printed = await printSelect(connection(), statement);
        tables[0]!.alias = 'renamed_alias';
        return { statement, printed };
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });
});
