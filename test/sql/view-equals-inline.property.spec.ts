/**
 * The promise: a view is its query. For a generated SELECT q over uploaded files (filters with
 * NULLs, joins of two files, GROUP BY with aggregates, window functions, ORDER BY every column with
 * LIMIT), `CREATE VIEW p.v AS (q)` then `SELECT * FROM p.v` answers the same columns (names and
 * types) and the same rows as `SELECT * FROM (q) AS sub`; and so do both under a generated outer
 * filter (`… WHERE <predicate over q's columns>`). Rows are compared as multisets: a SELECT from a
 * view or a subquery promises no order. Beside it, a kill check: a view looked up by its project
 * alone, the name left out of the comparison (every view reads as the project's first), is caught
 * at the count `npm test` runs.
 */
import fc from 'fast-check';
import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { selectOverTwoTables, uploadedSelect } from '../support/generatedSql';
import { givenProject, uniqueName } from '../support/world';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
const NUM_RUNS = 30;

/** The outer filter, chosen before q's column types are known and shaped to them when they are. */
type OuterFilter = { column: number; form: number; int: number; text: string; day: number };
const outerFilter = fc.record({
  column: fc.nat(),
  form: fc.nat({ max: 3 }),
  int: fc.integer({ min: -3, max: 15 }),
  text: fc.constantFrom('a', 'Z', 'apple', 'é', ''),
  day: fc.integer({ min: 1, max: 28 }),
});

/** A predicate on column `x` of type `type`: a NULL test, or a comparison with a literal of its type. */
const predicateOn = (x: string, type: string, f: OuterFilter) => {
  if (f.form === 0) return `${x} IS NULL`;
  if (f.form === 1) return `NOT (${x} IS NOT NULL AND ${x} = ${x})`;
  const op = f.form === 2 ? '>' : '<=';
  if (/INT|DOUBLE|DECIMAL/.test(type)) return `${x} ${op} ${f.int < 0 ? `(${f.int})` : f.int}`;
  if (type === 'VARCHAR') return `${x} ${op} '${f.text}'`;
  if (type === 'DATE') return `${x} ${op} DATE '2020-01-${String(f.day).padStart(2, '0')}'`;
  if (type === 'BOOLEAN') return f.form === 2 ? x : `NOT ${x}`;
  return `${x} IS NOT NULL`;
};

const shape = (a: SqlAnswer) =>
  a.type === 'table'
    ? {
        column_names: a.column_names,
        column_types: a.column_types,
        rows: a.data!.map((r) => JSON.stringify(r)).sort(),
      }
    : { error: `${a.error_code}: ${a.error_message}` };

/** What a run draws: two tables, a query over them, and the outer filter. */
type Drawn = ReturnType<typeof selectOverTwoTables<OuterFilter>> extends fc.Arbitrary<infer W> ? W : never;

/**
 * A view's query looked up by its project alone, the name left out of the comparison: the project's
 * first view answers for every name (the kill check's bug). Undone by `mockRestore`.
 */
const nameNotCompared = (views: TestApp['running']['services']['views']) =>
  jest
    .spyOn(views, 'queryOf')
    .mockImplementation(async (project) => (await views.list(project).catch(() => []))[0]?.query);

describe.each(storeKinds)('a view answers as its query inline (event store: %s)', (store) => {
  let t: TestApp;
  let project: string;

  beforeAll(async () => {
    t = await startTestApp(store);
    ({ name: project } = await givenProject(t));
  });
  afterAll(() => t?.dispose());

  const world = selectOverTwoTables(outerFilter);

  /** The view made of the drawn query answers as the query inline, with and without the drawn filter. */
  const viewAnswersAsInline = async (drawn: Drawn) => {
    const filter = drawn.extra;
    const q = await uploadedSelect(t, drawn);
    const inline = await querySql(t, `SELECT * FROM (${q}) AS sub`);
    // Only queries the endpoint answers make views (a type error DuckDB finds is refused at CREATE).
    if (inline.type !== 'table') return;
    const view = uniqueName('v');
    const created = await querySql(t, `CREATE VIEW ${project}.${view} AS (${q})`);
    expect({ q, created: created.type, error: created.error_message }).toEqual({
      q,
      created: 'ok',
      error: undefined,
    });
    const viewed = await querySql(t, `SELECT * FROM ${project}.${view}`);
    expect({ q, answer: shape(viewed) }).toEqual({ q, answer: shape(inline) });

    const columns = inline.column_names!;
    const at = filter.column % columns.length;
    const where = predicateOn(`x${at}`, inline.column_types![at]!, filter);
    const filteredInline = await querySql(t, `SELECT * FROM (${q}) AS sub WHERE ${where}`);
    const filteredView = await querySql(t, `SELECT * FROM ${project}.${view} WHERE ${where}`);
    expect(filteredInline.type).toBe('table');
    expect({ q, where, answer: shape(filteredView) }).toEqual({
      q,
      where,
      answer: shape(filteredInline),
    });
  };

  it('SELECT * FROM p.v equals SELECT * FROM (q) AS sub, with and without an outer filter', async () => {
    await fc.assert(fc.asyncProperty(world, viewAnswersAsInline), {
      seed: SEED,
      numRuns: propertyRuns(NUM_RUNS),
    });
  }, 240_000);

  it('kill check: a view looked up without its name (the project’s first one read) is caught', async () => {
    const spy = nameNotCompared(t.running.services.views);
    try {
      await expectCaught(fc.asyncProperty(world, viewAnswersAsInline), {
        seed: SEED,
        numRuns: propertyRuns(NUM_RUNS),
      });
    } finally {
      spy.mockRestore();
    }
  }, 240_000);
});
