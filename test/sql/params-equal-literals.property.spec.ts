/**
 * The promise: a bound value means what the same value written as a literal means. For generated
 * queries over an uploaded file, over projects' tables (`<project>.skills`,
 * `information_schema.tables`) and a one-row prediction, the answer with the values bound equals
 * the answer with the literals written into the text, over HTTP:
 *
 * - HTTP, `:name` placeholders and `params`;
 * - the MySQL door, `?` through mysql2's `execute` (a prepared statement, values in binary) and
 *   `query` (the driver escapes the values into the text, MySQL's backslash escapes);
 * - the PostgreSQL door, `$n` through node-postgres's `query(text, values)` (extended protocol,
 *   values as untyped text) and the values inlined as PostgreSQL literals (simple protocol; standard
 *   strings, or E'' strings as the driver's `escapeLiteral` writes them).
 *
 * Values sit in comparisons, IN, BETWEEN, LIKE, IS [NOT] NULL, IS NOT DISTINCT FROM, the select list,
 * arithmetic, function arguments (substr, round, coalesce, concat, lower), LIMIT and OFFSET.
 * Values: NULL, negative numbers, decimals, integers past 32 bits, booleans, dates, and strings with
 * quotes, backslashes, Unicode, newlines and what a tokenizer could take for a placeholder or a
 * comment (`?`, `:p0`, `$1`, `--`, `/*`, `#`). Each value has the type of what it is compared with
 * (a number beside a number column, …), as drivers' users write them. Rows are compared in order
 * (every query orders by a unique key) and labels (every column is aliased) are compared as they are.
 * The doors' cells are read back as HTTP renders them, by the HTTP answer's column types: integers
 * and decimals as numbers, booleans from 1/0 or t/f, dates as `YYYY-MM-DD` (drivers' own parsing off).
 *
 * The prediction (a small model trained in `beforeAll`, under 2 s) checks that a bound number and a
 * bound string reach the model as the literals do.
 *
 * Beside it, a kill check: HTTP's params cleaned of their null values (as optional fields are)
 * is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import pg from 'pg';
import { querySql, startTestApp, storeKinds, type SqlAnswer, type TestApp } from '../support/app';
import { asHttpCell, startDoors, type Doors } from '../support/doors';
import {
  generatedTable,
  uploadGenerated,
  type Column,
  type GeneratedTable,
  type Kind,
} from '../support/generatedSql';
import { givenRentalsModel, rentalRows } from '../support/modelsData';
import { givenProject, givenSkill } from '../support/world';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
/**
 * Runs over files and projects' tables. Halved from 30 (issue 62) once the kill check below caught
 * its bug at 15 on every one of seeds 1–20, on both stores (by run 11 at the latest, most by run 3);
 * each run's fresh seed draws new tables and queries, and `npm run test:deep` draws more.
 */
const NUM_RUNS = 15;

type Value = string | number | boolean | null;
type Hole = { value: Value; kind: Kind };
type Seg = string | Hole;
const isHole = (s: Seg): s is Hole => typeof s !== 'string';

/** Pieces of strings that quoting, escaping and tokenizing must all get right. */
const TRICKY = [
  'a',
  'Z',
  ' ',
  "'",
  "''",
  '"',
  '\\',
  '\\\\',
  "\\'",
  '\\n',
  '%',
  '_',
  'é',
  '日本',
  '😀',
  '?',
  ':p0',
  '@x',
  '$1',
  '--',
  '/*',
  '*/',
  '#',
  '`',
  ';',
  '\n',
  '\r',
  '\t',
  '\b',
  '\x1a',
];
const text = fc.array(fc.constantFrom(...TRICKY), { maxLength: 6 }).map((parts) => parts.join(''));
const day = (n: number) => new Date(Date.UTC(2020, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);

/** Fresh values of each kind (a double column is compared with decimals and integers alike). */
const FRESH: Record<Kind, fc.Arbitrary<Value>> = {
  int: fc.oneof(
    fc.integer({ min: -1000, max: 1000 }),
    fc.constantFrom(0, -1, 2_147_483_648, -9_007_199_254_740_991),
  ),
  double: fc.oneof(
    fc.integer({ min: -80, max: 80 }).map((n) => n / 8),
    fc.integer({ min: -50, max: 50 }).map((n) => n / 10),
    // Doubles of every shape but -0 (which no literal writes: String(-0) is "0"), within ±1e15: a
    // JSON number that is integral binds as an integer, and one past HUGEINT is refused by design
    // (docs/sql.md, Parameters; src/sql/parameters.ts: "send it as a string").
    fc.double({ min: -1e15, max: 1e15, noNaN: true }).map((n) => (n === 0 ? 0 : n)),
  ),
  text,
  bool: fc.boolean(),
  date: fc.integer({ min: 0, max: 60 }).map(day),
};

/** A generated file's cell as the value a client would send to match it. */
const valueOfCell = (kind: Kind, cell: string): Value =>
  kind === 'int' || kind === 'double' ? Number(cell) : kind === 'bool' ? cell === 'true' : cell;

/** A value for a hole of `kind`: fresh, one of `seen` (so filters match rows), or NULL. */
const valueFor = (kind: Kind, seen: Value[] = []): fc.Arbitrary<Hole> =>
  fc
    .oneof(
      { weight: 3, arbitrary: FRESH[kind] },
      ...(seen.length ? [{ weight: 3, arbitrary: fc.constantFrom(...seen) }] : []),
      { weight: 1, arbitrary: fc.constant(null) },
    )
    .map((value) => ({ value, kind }));

const joined = (parts: Seg[][], separator: string): Seg[] =>
  parts.flatMap((p, i) => (i === 0 ? p : [separator, ...p]));

/** `SELECT a.id AS x0, … FROM files.<T> AS a WHERE … ORDER BY a.id`, holes in both lists. */
const fileQuery = (table: GeneratedTable): fc.Arbitrary<Seg[]> => {
  const cols = table.columns.map((c, i) => ({
    ...c,
    sql: `a.${c.name}`,
    seen: table.rows.flatMap((r) => (r[i] === null ? [] : [valueOfCell(c.kind, r[i]!)])),
  }));
  const col = fc.constantFrom(...cols);
  const v = (c: Column & { seen: Value[] }) => valueFor(c.kind, c.seen);
  const condition: fc.Arbitrary<Seg[]> = col.chain((c) => {
    const ops = c.kind === 'bool' ? ['=', '<>'] : ['=', '<>', '<', '<=', '>', '>='];
    const forms: fc.Arbitrary<Seg[]>[] = [
      fc.tuple(fc.constantFrom(...ops), v(c)).map(([op, h]) => [`${c.sql} ${op} `, h]),
      fc.tuple(fc.constantFrom(...ops), v(c)).map(([op, h]) => [h, ` ${op} ${c.sql}`]),
      fc.tuple(v(c), v(c)).map(([h1, h2]) => [`${c.sql} IN (`, h1, ', ', h2, ')']),
      v(c).map((h) => [`${c.sql} IS NOT DISTINCT FROM `, h]),
      v(c).map((h) => [`coalesce(${c.sql}, `, h, `) = ${c.sql}`]),
      fc.tuple(v(c), fc.boolean()).map(([h, not]) => [h, ` IS ${not ? 'NOT ' : ''}NULL`]),
    ];
    if (c.kind !== 'bool' && c.kind !== 'text')
      forms.push(fc.tuple(v(c), v(c)).map(([lo, hi]) => [`${c.sql} BETWEEN `, lo, ' AND ', hi]));
    if (c.kind === 'text')
      forms.push(
        fc
          .tuple(fc.constantFrom('%', '_%', '%a%', "%'%", '%\\%', ''), v(c))
          .map(([pattern, h]) => [`${c.sql} LIKE concat(`, h, `, '${pattern.replace(/'/g, "''")}')`]),
        v(c).map((h) => [`${c.sql} LIKE `, h]),
        v(c).map((h) => [`lower(${c.sql}) = lower(`, h, ')']),
      );
    return fc.oneof(...forms);
  });
  const item: fc.Arbitrary<Seg[]> = col.chain((c) => {
    const forms: fc.Arbitrary<Seg[]>[] = [
      v(c).map((h) => [`coalesce(${c.sql}, `, h, ')']),
      v(c).map((h) => [`CASE WHEN ${c.sql} = `, h, " THEN 'same' ELSE 'other' END"]),
      fc
        .constantFrom<Kind>('int', 'double', 'text', 'bool', 'date')
        .chain((k) => valueFor(k).map((h) => [h])),
    ];
    const small = (min: number, max: number) =>
      fc.integer({ min, max }).map((value): Hole => ({ value, kind: 'int' }));
    if (c.kind === 'text')
      forms.push(
        v(c).map((h) => [`concat(${c.sql}, `, h, ')']),
        small(-1, 3).map((h) => [`substr(${c.sql}, `, h, ', 2)']),
      );
    if (c.kind === 'int')
      forms.push(
        valueFor('int').map((h) => [`${c.sql} + `, h]),
        small(-3, 3).map((h) => [`${c.sql} * `, h]),
      );
    if (c.kind === 'double') forms.push(small(0, 3).map((h) => [`round(${c.sql}, `, h, ')']));
    return fc.oneof(...forms);
  });
  return fc
    .tuple(
      fc.array(item, { maxLength: 2 }),
      fc.array(condition, { minLength: 1, maxLength: 2 }),
      fc.constantFrom(' AND ', ' OR '),
      fc.option(
        fc.tuple(
          fc.integer({ min: 0, max: 5 }),
          fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
        ),
      ),
    )
    .map(([items, conditions, andOr, limit]) => [
      'SELECT a.id AS x0',
      ...items.flatMap((it, i) => [', ', ...it, ` AS x${i + 1}`]),
      ' FROM files.<T> AS a WHERE ',
      ...joined(
        conditions.map((c) => ['(', ...c, ')']),
        andOr,
      ),
      ' ORDER BY a.id',
      ...(limit
        ? [
            ' LIMIT ',
            { value: limit[0], kind: 'int' } as Hole,
            ...(limit[1] === undefined ? [] : [' OFFSET ', { value: limit[1], kind: 'int' } as Hole]),
          ]
        : []),
    ]);
};

/** Queries over projects' tables, with the skills' notes (tricky strings) among the values. */
const projectQuery = (project: string, notes: string[]): fc.Arbitrary<Seg[]> => {
  const note = valueFor('text', notes);
  const schema = fc
    .oneof(fc.constantFrom<Value>('information_schema', project, 'files', 'mindsdb'), text)
    .map((value): Hole => ({ value, kind: 'text' }));
  const pattern = fc
    .oneof(fc.constantFrom<Value>('S%', '%A%', '%', 'SKILLS', '_%S'), text)
    .map((value): Hole => ({ value, kind: 'text' }));
  const name = fc
    .oneof(fc.constantFrom<Value>('s_0', 's_1', 'S_2', 's_9'), text)
    .map((value): Hole => ({ value, kind: 'text' }));
  return fc.oneof(
    fc
      .tuple(note, name)
      .map(([n, s]): Seg[] => [
        `SELECT name AS x0, json_extract_string(params, '$.note') AS x1, `,
        n,
        ` AS x2 FROM ${project}.skills WHERE json_extract_string(params, '$.note') = `,
        n,
        ' OR name = ',
        s,
        ' ORDER BY name',
      ]),
    fc
      .tuple(note, name, name)
      .map(([n, s1, s2]): Seg[] => [
        `SELECT name AS x0, type AS x1 FROM ${project}.skills WHERE name IN (`,
        s1,
        ', ',
        s2,
        ') OR params LIKE concat(',
        "'%', ",
        n,
        ", '%') ORDER BY name",
      ]),
    fc
      .tuple(schema, pattern)
      .map(([s, p]): Seg[] => [
        'SELECT table_schema AS x0, table_name AS x1 FROM information_schema.tables WHERE table_schema = ',
        s,
        ' AND table_name LIKE ',
        p,
        ' ORDER BY table_schema, table_name',
      ]),
  );
};

/** A one-row prediction from bound inputs (the model's own columns). */
const predictionQuery = (model: string): fc.Arbitrary<Seg[]> =>
  fc
    .tuple(
      fc.oneof(fc.integer({ min: 200, max: 2000 }), fc.integer({ min: -50, max: 50 })),
      fc.oneof(fc.constantFrom('good', 'great'), text),
    )
    .map(([sqft, location]): Seg[] => [
      `SELECT rental_price AS x0, sqft AS x1, location AS x2 FROM ${model} WHERE sqft = `,
      { value: sqft, kind: 'int' },
      ' AND location = ',
      { value: location, kind: 'text' },
    ]);

/**
 * A knowledge base's search (built-in embeddings) from a bound question, and maybe a bound weight
 * and threshold: the planner takes them out of WHERE before the query runs, literal or parameter.
 */
const searchQuery = (kb: string): fc.Arbitrary<Seg[]> =>
  fc
    .tuple(
      fc.oneof(
        fc.constantFrom('refund', 'shipping days', 'refund within thirty days'),
        text.filter((s) => s.trim() !== ''),
      ),
      fc.option(
        fc.integer({ min: 0, max: 10 }).map((n) => n / 10),
        { nil: undefined },
      ),
      fc.option(
        fc.integer({ min: 0, max: 10 }).map((n) => n / 20),
        { nil: undefined },
      ),
    )
    .map(([question, alpha, threshold]): Seg[] => [
      `SELECT id AS x0, chunk_content AS x1, round(relevance, 6) AS x2 FROM ${kb} WHERE content = `,
      { value: question, kind: 'text' },
      ...(alpha === undefined
        ? []
        : [' AND hybrid_search_alpha = ', { value: alpha, kind: 'double' } as Hole]),
      ...(threshold === undefined
        ? []
        : [' AND relevance_threshold = ', { value: threshold, kind: 'double' } as Hole]),
      ' ORDER BY id, chunk_id',
    ]);

const render = (segs: Seg[], place: (h: Hole, i: number) => string) => {
  let i = 0;
  return segs.map((s) => (isHole(s) ? place(s, i++) : s)).join('');
};
const valuesOf = (segs: Seg[]) => segs.filter(isHole).map((h) => h.value);

/** A value as a literal of the endpoint's (MySQL's) dialect: backslashes are escapes there. */
const mysqlLiteral = (h: Hole) =>
  h.value === null
    ? 'NULL'
    : typeof h.value === 'boolean'
      ? String(h.value).toUpperCase()
      : typeof h.value === 'number'
        ? String(h.value)
        : `'${h.value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** A value as a PostgreSQL literal: a standard string (a backslash is a character) or the driver's E''. */
const pgLiteral = (eStrings: boolean) => (h: Hole) =>
  typeof h.value === 'string'
    ? eStrings
      ? pg.escapeLiteral(h.value)
      : `'${h.value.replace(/'/g, "''")}'`
    : mysqlLiteral(h);

type Door = { labels: string[]; rows: unknown[][] } | { error: string };

const asHttp = (literal: SqlAnswer, d: Door) =>
  'error' in d
    ? d
    : {
        labels: d.labels,
        rows: d.rows.map((r) => r.map((v, i) => asHttpCell(literal.column_types![i]!, v))),
      };

const httpShape = (a: SqlAnswer) =>
  a.type === 'table'
    ? { labels: a.column_names, rows: a.data }
    : { error: `${a.error_code}: ${a.error_message}` };

/**
 * The endpoint's params cleaned of null values, as optional fields are: a value bound as NULL is
 * left out (the kill check's bug). Undone by `mockRestore`.
 */
const nullParamsDropped = (engine: TestApp['running']['sql']) => {
  const { execute } = engine;
  return jest
    .spyOn(engine, 'execute')
    .mockImplementation((query, context, params, ...rest) =>
      execute(
        query,
        context,
        Object.fromEntries(Object.entries(params).filter(([, v]) => v !== null)),
        ...rest,
      ),
    );
};

describe.each(storeKinds)('bound values equal inlined literals (event store: %s)', (store) => {
  let t: TestApp;
  let doors: Doors;
  let my: Doors['my'];
  let pgc: Doors['pgc'];
  let project: string;
  let model: string;
  let kb: string;
  let notes: string[];

  beforeAll(async () => {
    t = await startTestApp(store);
    doors = await startDoors(t);
    ({ my, pgc } = doors);

    ({ name: project } = await givenProject(t));
    notes = fc.sample(text, { seed: SEED, numRuns: 4 });
    for (const [i, note] of notes.entries())
      await givenSkill(t, project, { name: `s_${i}`, params: { note } });
    model = await givenRentalsModel(t, project, rentalRows(40));
    kb = `${project}.kb`;
    for (const statement of [
      `CREATE KNOWLEDGE_BASE ${kb} USING content_columns = ['content'], id_column = 'id'`,
      `INSERT INTO ${kb} (id, content) VALUES ('1', 'refund within thirty days'), ('2', 'shipping takes a week'), ('3', 'days of refund and shipping')`,
    ])
      expect((await querySql(t, statement)).type).not.toBe('error');
  }, 120_000);
  afterAll(async () => {
    await doors?.close();
    await t?.running.services.models.idle();
    await t?.dispose();
  });

  const mysqlAnswer = async (run: () => Promise<[unknown, unknown]>): Promise<Door> => {
    try {
      const [rows, fields] = (await run()) as [Record<string, unknown>[], { name: string }[]];
      const labels = fields.map((f) => f.name);
      return { labels, rows: rows.map((r) => labels.map((l) => r[l])) };
    } catch (e) {
      return { error: (e as Error).message };
    }
  };
  const pgAnswer = async (run: () => Promise<pg.QueryResult>): Promise<Door> => {
    try {
      const r = await run();
      return {
        labels: r.fields.map((f) => f.name),
        rows: r.rows.map((row) => r.fields.map((f) => row[f.name])),
      };
    } catch (e) {
      return { error: (e as Error).message };
    }
  };

  /** Every way of sending the query's values, each compared with the literals over HTTP. */
  const expectAllEqual = async (segs: Seg[], eStrings: boolean) => {
    const values = valuesOf(segs);
    const literalSql = render(segs, mysqlLiteral);
    const literal = await querySql(t, literalSql);
    expect({ literalSql, type: literal.type, error: literal.error_message }).toEqual({
      literalSql,
      type: 'table',
      error: undefined,
    });
    const expected = httpShape(literal);

    const named = render(segs, (_h, i) => `:p${i}`);
    const http = await querySql(t, named, {
      params: Object.fromEntries(values.map((v, i) => [`p${i}`, v])),
    });
    const questions = render(segs, () => '?');
    const dollars = render(segs, (_h, i) => `$${i + 1}`);
    const inlinedPg = render(segs, pgLiteral(eStrings));
    const answers = {
      'HTTP :name': httpShape(http),
      'MySQL execute ?': asHttp(literal, await mysqlAnswer(() => my.execute(questions, values))),
      'MySQL query ?': asHttp(literal, await mysqlAnswer(() => my.query(questions, values))),
      'PostgreSQL $n': asHttp(literal, await pgAnswer(() => pgc.query(dollars, values))),
      'PostgreSQL inlined': asHttp(literal, await pgAnswer(() => pgc.query(inlinedPg))),
    };
    expect({ literalSql, values, answers }).toEqual({
      literalSql,
      values,
      answers: Object.fromEntries(Object.keys(answers).map((k) => [k, expected])),
    });
  };

  /** Files and projects' tables: the world of a run, drawn once the project and its notes exist. */
  const filesAndProjects = () =>
    fc.asyncProperty(
      generatedTable().chain((table) =>
        fc.record({
          table: fc.constant(table),
          fileQueries: fc.array(fileQuery(table), { minLength: 2, maxLength: 2 }),
          projectQuery: projectQuery(project, notes),
          eStrings: fc.boolean(),
        }),
      ),
      async ({ table, fileQueries, projectQuery: pq, eStrings }) => {
        const file = await uploadGenerated(t, table);
        for (const q of fileQueries)
          await expectAllEqual(
            q.map((s) => (isHole(s) ? s : s.replace('files.<T>', file))),
            eStrings,
          );
        await expectAllEqual(pq, eStrings);
      },
    );

  it('over files and projects’ tables, on HTTP, MySQL (prepared and client-side) and PostgreSQL (extended and simple)', async () => {
    await fc.assert(filesAndProjects(), { seed: SEED, numRuns: propertyRuns(NUM_RUNS) });
  }, 240_000);

  it('kill check: HTTP’s params cleaned of their null values are caught', async () => {
    const spy = nullParamsDropped(t.running.sql);
    try {
      await expectCaught(filesAndProjects(), { seed: SEED, numRuns: propertyRuns(NUM_RUNS) });
    } finally {
      spy.mockRestore();
    }
  }, 240_000);

  it('in a one-row prediction', async () => {
    await fc.assert(
      fc.asyncProperty(predictionQuery(model), fc.boolean(), (q, eStrings) => expectAllEqual(q, eStrings)),
      { seed: SEED, numRuns: propertyRuns(10) },
    );
  }, 120_000);

  it('in a knowledge base search (its question, weight and threshold)', async () => {
    await fc.assert(
      fc.asyncProperty(searchQuery(kb), fc.boolean(), (q, eStrings) => expectAllEqual(q, eStrings)),
      { seed: SEED, numRuns: propertyRuns(10) },
    );
  }, 120_000);
});
