import fc from 'fast-check';
import type { DuckDBConnection } from '@duckdb/node-api';
import { querySql, type SqlAnswer, type TestApp } from './app';

/**
 * Generated SELECTs over the projections the SQL endpoint exposes, each rendered twice: as a client
 * writes it (MindsDB names, MySQL quoting, `:v` parameters) and as the same query over the DuckDB
 * views those names stand for (`mdb_information_schema."X"`, a project's tables as that view
 * filtered on the project, literals inlined). The second text runs on a fresh DuckDB connection of
 * the app's own database: no prepared statement, no answer cache, no rewriting.
 */

type Kind = 'text' | 'bool' | 'int' | 'double' | 'list' | 'time';
type Column = { readonly name: string; readonly kind: Kind };
type Table = {
  /** The view in `mdb_information_schema`. */
  readonly view: string;
  /** Its name as a project's table (`<project>.skills`), when it is one. */
  readonly projectTable: string | null;
  readonly columns: readonly Column[];
};

const col = (name: string, kind: Kind = 'text'): Column => ({ name, kind });
const TABLES: readonly Table[] = [
  {
    view: 'SKILLS',
    projectTable: 'skills',
    columns: [col('NAME'), col('PROJECT'), col('TYPE'), col('PARAMS')],
  },
  {
    view: 'AGENTS',
    projectTable: 'agents',
    columns: [col('NAME'), col('PROJECT'), col('MODEL_NAME'), col('SKILLS', 'list'), col('PARAMS')],
  },
  {
    view: 'CHATBOTS',
    projectTable: 'chatbots',
    columns: [
      col('NAME'),
      col('PROJECT'),
      col('DATABASE'),
      col('AGENT'),
      col('MODEL_NAME'),
      col('PARAMS'),
      col('IS_RUNNING', 'bool'),
      col('LAST_ERROR'),
      col('WEBHOOK_TOKEN'),
    ],
  },
  {
    view: 'MODELS',
    projectTable: 'models',
    columns: [
      col('NAME'),
      col('ENGINE'),
      col('PROJECT'),
      col('ACTIVE', 'bool'),
      col('VERSION', 'int'),
      col('STATUS'),
      col('ACCURACY', 'double'),
      col('PREDICT'),
      col('ERROR'),
      col('TRAINING_OPTIONS'),
      col('TAG'),
      col('CREATED_AT', 'time'),
    ],
  },
  { view: 'KNOWLEDGE_BASES', projectTable: 'knowledge_bases', columns: [col('NAME'), col('PROJECT')] },
  {
    view: 'DATABASES',
    projectTable: null,
    columns: [col('NAME'), col('TYPE'), col('ENGINE'), col('CONNECTION_DATA')],
  },
  {
    view: 'EVENTS',
    projectTable: null,
    columns: [
      col('GLOBAL_POSITION', 'int'),
      col('STREAM'),
      col('STREAM_POSITION', 'int'),
      col('TYPE'),
      col('DATA'),
      col('RECORDED_AT', 'time'),
    ],
  },
  {
    view: 'TABLES',
    projectTable: null,
    columns: [col('TABLE_SCHEMA'), col('TABLE_NAME'), col('TABLE_TYPE')],
  },
  // information_schema.COLUMNS is not here: it also lists registered external databases' columns,
  // read from them live, which a fresh DuckDB connection cannot answer (test/sql/mysql-dialect.spec.ts checks it).

  { view: 'SCHEMATA', projectTable: null, columns: [col('SCHEMA_NAME'), col('DEFAULT_CHARACTER_SET_NAME')] },
];

/** Where a query reads a table: information_schema, a project's schema, or bare in `context.db`. */
type Scope = { kind: 'information_schema' } | { kind: 'project'; project: string } | { kind: 'bare' };
type Source = {
  table: Table;
  scope: Scope;
  /** How the table name is spelled (case varies). */ spelled: string;
};

type Predicate =
  | { op: '=' | '<>' | 'LIKE' | 'NOT LIKE'; column: Column; value: string }
  | { op: 'IN'; column: Column; values: string[] }
  | { op: 'IS NULL' | 'IS NOT NULL'; column: Column }
  /** `= :v`: bound by the endpoint, inlined in the reference text. */
  | { op: 'param'; column: Column }
  | { op: '>' | '=n'; column: Column; value: number }
  | { op: 'bool'; column: Column; value: boolean };
type Where = { predicates: { alias: 't0' | 't1'; predicate: Predicate }[]; joiner: 'AND' | 'OR' };

type Aggregate = { fn: 'count' | 'min' | 'max' | 'sum'; column: Column | null };

type QueryShape =
  | {
      shape: 'plain';
      source: Source;
      items: Column[] | '*';
      distinct: boolean;
      where: Where;
      /** total: by every column it answers (ties are equal rows), so the order is compared too. */
      order: 'none' | 'total' | 'partial';
      descending: boolean;
      limit: number | null;
    }
  | {
      shape: 'aggregate';
      source: Source;
      group: Column | null;
      aggregates: Aggregate[];
      where: Where;
      having: boolean;
      ordered: boolean;
    }
  | {
      shape: 'join';
      left: Source;
      right: Source;
      join: 'JOIN' | 'LEFT JOIN';
      on: [Column, Column];
      items: { alias: 't0' | 't1'; column: Column }[];
      where: Where;
      ordered: boolean;
    }
  /**
   * MindsDB's SHOW statements, which the endpoint answers with SELECTs of its own over the same
   * views (through the same caches); the reference is what MindsDB documents each one to list.
   */
  | {
      shape: 'show';
      what:
        'DATABASES' | 'FULL DATABASES' | 'PROJECTS' | 'TABLES' | 'SKILLS' | 'AGENTS' | 'CHATBOTS' | 'MODELS';
      from: string | null;
      like: string | null;
    };
/** A query and the database the client sends as `context.db` (where bare names and SHOW look). */
export type Query = QueryShape & { db: string };

const LONG_NAME = 'a_skill_with_a_much_longer_name_than_the_others';
const TEXTS = [
  's1',
  's2',
  'a1',
  'b1',
  'm1',
  'd1',
  'mindsdb',
  'p1',
  'custom',
  'text2sql',
  'complete',
  'data',
  'files',
  LONG_NAME,
];
/** Values bound to `:v`; the long one is longer than any string the tables start with. */
export const PARAMS = ['s1', 'a1', 'mindsdb', LONG_NAME, 'custom', ''] as const;
const PATTERNS = ['s%', '%1', '_1', '%a%', 'm%', '%', 'p_', '%i%'];

const projectName = fc.constantFrom('mindsdb', 'p1', 'P1', 'MindsDB', 'p2');
const spell = (name: string) =>
  fc.constantFrom(name, name.toLowerCase(), name[0]! + name.slice(1).toLowerCase());

const source: fc.Arbitrary<Source> = fc.constantFrom(...TABLES).chain((table) => {
  if (table.projectTable === null)
    return spell(table.view).map((spelled): Source => ({
      table,
      scope: { kind: 'information_schema' },
      spelled,
    }));
  return fc.oneof(
    spell(table.view).map((spelled): Source => ({ table, scope: { kind: 'information_schema' }, spelled })),
    fc
      .tuple(projectName, spell(table.projectTable))
      .map(([project, spelled]): Source => ({ table, scope: { kind: 'project', project }, spelled })),
    spell(table.projectTable).map((spelled): Source => ({ table, scope: { kind: 'bare' }, spelled })),
  );
});

const predicate = (column: Column): fc.Arbitrary<Predicate> => {
  const nulls = fc.constantFrom('IS NULL' as const, 'IS NOT NULL' as const).map((op) => ({ op, column }));
  switch (column.kind) {
    case 'text':
      return fc.oneof(
        fc.record({
          op: fc.constantFrom('=' as const, '<>' as const),
          column: fc.constant(column),
          value: fc.constantFrom(...TEXTS),
        }),
        fc.record({
          op: fc.constantFrom('LIKE' as const, 'NOT LIKE' as const),
          column: fc.constant(column),
          value: fc.constantFrom(...PATTERNS),
        }),
        fc.record({
          op: fc.constant('IN' as const),
          column: fc.constant(column),
          values: fc.uniqueArray(fc.constantFrom(...TEXTS), { minLength: 1, maxLength: 3 }),
        }),
        fc.constant({ op: 'param' as const, column }),
        nulls,
      );
    case 'int':
    case 'double':
      return fc.oneof(
        fc.record({
          op: fc.constantFrom('>' as const, '=n' as const),
          column: fc.constant(column),
          value: fc.integer({ min: 0, max: 4 }),
        }),
        nulls,
      );
    case 'bool':
      return fc.oneof(
        fc.record({ op: fc.constant('bool' as const), column: fc.constant(column), value: fc.boolean() }),
        nulls,
      );
    default:
      return nulls;
  }
};

const whereOver = (tables: { alias: 't0' | 't1'; table: Table }[]): fc.Arbitrary<Where> =>
  fc.record({
    predicates: fc.array(
      fc
        .constantFrom(...tables)
        .chain(({ alias, table }) =>
          fc.constantFrom(...table.columns).chain((c) => predicate(c).map((p) => ({ alias, predicate: p }))),
        ),
      { maxLength: 2 },
    ),
    joiner: fc.constantFrom('AND' as const, 'OR' as const),
  });

const plain: fc.Arbitrary<QueryShape> = source.chain((s) =>
  fc.record({
    shape: fc.constant('plain' as const),
    source: fc.constant(s),
    items: fc.oneof(
      fc.constant('*' as const),
      fc.uniqueArray(fc.constantFrom(...s.table.columns), { minLength: 1, maxLength: 3 }),
    ),
    distinct: fc.boolean(),
    where: whereOver([{ alias: 't0', table: s.table }]),
    order: fc.constantFrom('none' as const, 'total' as const, 'partial' as const),
    descending: fc.boolean(),
    limit: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
  }),
);

const aggregate: fc.Arbitrary<QueryShape> = source.chain((s) => {
  const orderable = s.table.columns.filter((c) => c.kind !== 'list');
  return fc.record({
    shape: fc.constant('aggregate' as const),
    source: fc.constant(s),
    group: fc.option(fc.constantFrom(...orderable), { nil: null }),
    aggregates: fc.array(
      fc.oneof(
        fc.constant<Aggregate>({ fn: 'count', column: null }),
        fc.record({
          fn: fc.constantFrom('count' as const, 'min' as const, 'max' as const),
          column: fc.constantFrom(...orderable),
        }),
        ...(orderable.some((c) => c.kind === 'int')
          ? [
              fc.record({
                fn: fc.constant('sum' as const),
                column: fc.constantFrom(...orderable.filter((c) => c.kind === 'int')),
              }),
            ]
          : []),
      ),
      { minLength: 1, maxLength: 3 },
    ),
    where: whereOver([{ alias: 't0', table: s.table }]),
    having: fc.boolean(),
    ordered: fc.boolean(),
  });
});

const join: fc.Arbitrary<QueryShape> = fc.tuple(source, source).chain(([l, r]) => {
  const text = (t: Table) => t.columns.filter((c) => c.kind === 'text');
  return fc.record({
    shape: fc.constant('join' as const),
    left: fc.constant(l),
    right: fc.constant(r),
    join: fc.constantFrom('JOIN' as const, 'LEFT JOIN' as const),
    on: fc.tuple(fc.constantFrom(...text(l.table)), fc.constantFrom(...text(r.table))),
    items: fc.array(
      fc.oneof(
        fc.constantFrom(...l.table.columns).map((column) => ({ alias: 't0' as const, column })),
        fc.constantFrom(...r.table.columns).map((column) => ({ alias: 't1' as const, column })),
      ),
      { minLength: 1, maxLength: 3 },
    ),
    where: whereOver([
      { alias: 't0', table: l.table },
      { alias: 't1', table: r.table },
    ]),
    ordered: fc.boolean(),
  });
});

const show: fc.Arbitrary<QueryShape> = fc.record({
  shape: fc.constant('show' as const),
  what: fc.constantFrom(
    'DATABASES' as const,
    'FULL DATABASES' as const,
    'PROJECTS' as const,
    'TABLES' as const,
    'SKILLS' as const,
    'AGENTS' as const,
    'CHATBOTS' as const,
    'MODELS' as const,
  ),
  from: fc.option(projectName, { nil: null }),
  like: fc.option(fc.constantFrom(...PATTERNS), { nil: null }),
});

const shape: fc.Arbitrary<QueryShape> = fc.oneof(
  { weight: 1, arbitrary: show },
  { weight: 3, arbitrary: plain },
  { weight: 2, arbitrary: aggregate },
  { weight: 2, arbitrary: join },
);

export const query: fc.Arbitrary<Query> = fc
  .tuple(shape, fc.constantFrom('mindsdb', 'mindsdb', 'p1', 'P1'))
  .map(([q, db]): Query => ({ ...q, db }));

/** Whether the query reads a project's tables, and which project (a missing one is error 1049). */
export const projectsRead = (q: Query) => {
  const contextDb = q.db;
  const of = (s: Source) =>
    s.scope.kind === 'project' ? [s.scope.project] : s.scope.kind === 'bare' ? [contextDb] : [];
  if (q.shape === 'show')
    return ['DATABASES', 'FULL DATABASES', 'PROJECTS'].includes(q.what)
      ? []
      : q.what === 'TABLES' || q.from !== null
        ? [q.from ?? contextDb]
        : [];
  return q.shape === 'join' ? [...of(q.left), ...of(q.right)] : of(q.source);
};

type Dialect = 'client' | 'duckdb';
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * The query in one dialect; `param` is the value `:v` stands for (inlined for DuckDB).
 * `contextIsProject`: `SHOW SKILLS` (and the like) without FROM lists the context project's
 * resources, and every project's when the context database is not a project.
 */
export const render = (q: Query, dialect: Dialect, param: string, contextIsProject = true) => {
  const id = (name: string) => (dialect === 'client' ? `\`${name}\`` : `"${name}"`);
  const ref = (alias: string, c: Column) => `${alias}.${id(c.name)}`;
  const from = (s: Source, alias: string) => {
    if (dialect === 'client') {
      const name =
        s.scope.kind === 'information_schema'
          ? `information_schema.${s.spelled}`
          : s.scope.kind === 'project'
            ? `${s.scope.project}.${s.spelled}`
            : s.spelled;
      return `${name} AS ${alias}`;
    }
    const view = `mdb_information_schema.${id(s.table.view)}`;
    if (s.scope.kind === 'information_schema') return `${view} AS ${alias}`;
    const project = s.scope.kind === 'project' ? s.scope.project : q.db;
    return `(SELECT * FROM ${view} WHERE lower("PROJECT") = ${lit(project.toLowerCase())}) AS ${alias}`;
  };
  const condition = (alias: string, p: Predicate) => {
    const c = ref(alias, p.column);
    switch (p.op) {
      case '=':
      case '<>':
      case 'LIKE':
      case 'NOT LIKE':
        return `${c} ${p.op} ${lit(p.value)}`;
      case 'IN':
        return `${c} IN (${p.values.map(lit).join(', ')})`;
      case 'IS NULL':
      case 'IS NOT NULL':
        return `${c} ${p.op}`;
      case 'param':
        return `${c} = ${dialect === 'client' ? ':v' : lit(param)}`;
      case '>':
        return `${c} > ${p.value}`;
      case '=n':
        return `${c} = ${p.value}`;
      case 'bool':
        return `${c} = ${p.value}`;
    }
  };
  const where = (w: Where) =>
    w.predicates.length
      ? ` WHERE ${w.predicates.map((p) => `(${condition(p.alias, p.predicate)})`).join(` ${w.joiner} `)}`
      : '';

  switch (q.shape) {
    case 'show': {
      const scoped = !['DATABASES', 'FULL DATABASES', 'PROJECTS'].includes(q.what);
      if (dialect === 'client')
        return `SHOW ${q.what}${scoped && q.from !== null ? ` FROM ${q.from}` : ''}${q.like === null ? '' : ` LIKE ${lit(q.like)}`}`;
      const project = (q.from ?? q.db).toLowerCase();
      const like = (column: string) => (q.like === null ? '' : ` AND "${column}" LIKE ${lit(q.like)}`);
      const databases = 'mdb_information_schema."DATABASES"';
      switch (q.what) {
        case 'DATABASES':
          return `SELECT "NAME" AS "Database" FROM ${databases} WHERE true${like('NAME')}`;
        case 'FULL DATABASES':
          return `SELECT "NAME" AS "Database", "TYPE", "ENGINE" FROM ${databases} WHERE true${like('NAME')}`;
        case 'PROJECTS':
          return `SELECT "NAME" AS project FROM ${databases} WHERE "TYPE" = 'project'${like('NAME')}`;
        case 'TABLES':
          return `SELECT "TABLE_NAME" AS "Tables_in_${q.from ?? q.db}" FROM mdb_information_schema."TABLES" WHERE lower("TABLE_SCHEMA") = ${lit(project)}${like('TABLE_NAME')}`;
        default:
          return `SELECT * FROM mdb_information_schema.${id(q.what)} WHERE ${
            q.from === null && !contextIsProject ? 'true' : `lower("PROJECT") = ${lit(project)}`
          }${like('NAME')}`;
      }
    }
    case 'plain': {
      const columns = q.items === '*' ? q.source.table.columns : q.items;
      const list = q.items === '*' ? '*' : q.items.map((c) => ref('t0', c)).join(', ');
      const direction = q.descending ? ' DESC' : '';
      const order =
        q.order === 'total'
          ? ` ORDER BY ${columns.map((c) => `${ref('t0', c)}${direction}`).join(', ')}`
          : q.order === 'partial'
            ? ` ORDER BY ${ref('t0', columns[0]!)}${direction}`
            : '';
      // A LIMIT is only deterministic under a total order.
      const limit = q.order === 'total' && q.limit !== null ? ` LIMIT ${q.limit}` : '';
      return `SELECT ${q.distinct ? 'DISTINCT ' : ''}${list} FROM ${from(q.source, 't0')}${where(q.where)}${order}${limit}`;
    }
    case 'aggregate': {
      const agg = (a: Aggregate, i: number) =>
        `${a.column === null ? 'count(*)' : `${a.fn}(${ref('t0', a.column)})`} AS agg${i}`;
      const list = [...(q.group ? [ref('t0', q.group)] : []), ...q.aggregates.map(agg)].join(', ');
      const group = q.group ? ` GROUP BY ${ref('t0', q.group)}` : '';
      const having = q.group && q.having ? ' HAVING count(*) > 1' : '';
      const order = q.group && q.ordered ? ` ORDER BY ${ref('t0', q.group)}` : '';
      return `SELECT ${list} FROM ${from(q.source, 't0')}${where(q.where)}${group}${having}${order}`;
    }
    case 'join': {
      const list = q.items.map((x, i) => `${ref(x.alias, x.column)} AS c${i}`).join(', ');
      const order = q.ordered ? ` ORDER BY ${q.items.map((_, i) => `c${i}`).join(', ')}` : '';
      return `SELECT ${list} FROM ${from(q.left, 't0')} ${q.join} ${from(q.right, 't1')} ON ${ref('t0', q.on[0])} = ${ref('t1', q.on[1])}${where(q.where)}${order}`;
    }
  }
};

/** Whether the answer's row order is defined by the query (then it is compared as a sequence). */
export const isTotallyOrdered = (q: Query) =>
  q.shape === 'show'
    ? false
    : q.shape === 'plain'
      ? q.order === 'total'
      : q.shape === 'aggregate'
        ? q.group === null || q.ordered
        : q.ordered;

export const usesParam = (q: Query) =>
  q.shape !== 'show' && q.where.predicates.some((p) => p.predicate.op === 'param');

/**
 * A DuckDB result cell as docs/sql.md says the endpoint answers it: integers as numbers when
 * JavaScript holds them exactly (else strings), NaN and infinities as null, timestamps as
 * `YYYY-MM-DD HH:MM:SS.ffffff`, lists as JSON arrays. Written from the documented rules, not
 * from the endpoint's converter, so that the two are checked against each other.
 */
const expectedCell = (type: string, value: unknown): unknown => {
  if (value === null || value === undefined) return null;
  if (/^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/.test(type)) {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : String(value);
  }
  if (/^DECIMAL/.test(type)) return Number(value);
  if (/^(DOUBLE|FLOAT|REAL)$/.test(type))
    return typeof value === 'number' && Number.isFinite(value) ? value : null;
  if (type === 'TIMESTAMP') {
    const m = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(?:\.(\d{1,6}))?$/.exec(String(value));
    return m ? `${m[1]}.${(m[2] ?? '').padEnd(6, '0')}` : String(value);
  }
  return value;
};

export type ReferenceAnswer = { column_names: string[]; column_types: string[]; data: unknown[][] };

/** The reference answer: the DuckDB text on a brand-new connection, closed afterwards. */
export const referenceAnswer = async (t: TestApp, sql: string): Promise<ReferenceAnswer> => {
  const connection: DuckDBConnection = await t.running.ctx.duck.instance.connect();
  try {
    const reader = await connection.runAndReadAll(sql);
    const types = reader.columnTypes().map(String);
    return {
      column_names: reader.columnNames(),
      column_types: types,
      data: reader.getRowsJson().map((row) => row.map((cell, i) => expectedCell(types[i]!, cell))),
    };
  } finally {
    connection.closeSync();
  }
};

/** Rows as a sorted list of their JSON: two answers with the same rows in any order compare equal. */
export const asMultiset = (data: unknown[][]) => data.map((r) => JSON.stringify(r)).sort();

/** `answer`: the endpoint's answer to the client text (checked against the reference when it could be). */
export type Check = { ok: true; answer: SqlAnswer } | { ok: false; message: string };

/** The projects that exist now (lower case), as GET /api/projects lists them. */
export const liveProjects = async (t: TestApp): Promise<ReadonlySet<string>> =>
  new Set(
    ((await t.http.get('/api/projects').expect(200)).body as { name: string }[]).map((p) =>
      p.name.toLowerCase(),
    ),
  );

/**
 * Runs one query through POST /api/sql/query and on a fresh connection and compares the answers:
 * names, types and rows (as a sequence when the query orders them totally, else as multisets). A
 * query over a project that does not exist must be error 1049 (the reference has no such notion).
 * `live`: the projects that exist (`liveProjects`), listed once after the last write rather than
 * before every query (nothing between two writes makes or drops one).
 */
export const checkQuery = async (
  t: TestApp,
  q: Query,
  param: string,
  live: ReadonlySet<string>,
): Promise<Check> => {
  const clientText = render(q, 'client', param);
  const duckText = render(q, 'duckdb', param, live.has(q.db.toLowerCase()));
  const answer: SqlAnswer = await querySql(t, clientText, {
    context: { db: q.db },
    ...(usesParam(q) ? { params: { v: param } } : {}),
  });
  const missing = projectsRead(q).filter((p) => !live.has(p.toLowerCase()));
  const describe = (what: string, extra: unknown) =>
    `${what}\n  client: ${clientText}   (context.db = ${q.db}${usesParam(q) ? `, v = ${JSON.stringify(param)}` : ''})\n  duckdb: ${duckText}\n  ${JSON.stringify(extra)}`;
  if (missing.length) {
    // A name that is no project may be an external database (`p2` is, sometimes): the query then
    // goes there, which is no projection and outside this comparison.
    const integrations = new Set(
      ((await t.http.get('/api/databases').expect(200)).body as { name: string; type: string }[])
        .filter((d) => d.type === 'data')
        .map((d) => d.name.toLowerCase()),
    );
    if (missing.some((p) => integrations.has(p.toLowerCase()))) return { ok: true, answer };
    if (answer.type === 'error' && answer.error_code === 1049) return { ok: true, answer };
    return {
      ok: false,
      message: describe(`project ${missing[0]} does not exist: expected error 1049`, answer),
    };
  }
  if (answer.type !== 'table')
    return { ok: false, message: describe('the endpoint did not answer a table', answer) };
  const reference = await referenceAnswer(t, duckText);
  const got = { column_names: answer.column_names, column_types: answer.column_types };
  const want = { column_names: reference.column_names, column_types: reference.column_types };
  if (JSON.stringify(got) !== JSON.stringify(want))
    return { ok: false, message: describe('columns differ', { endpoint: got, fresh: want }) };
  const ordered = isTotallyOrdered(q);
  const a = ordered ? (answer.data ?? []).map((r) => JSON.stringify(r)) : asMultiset(answer.data ?? []);
  const b = ordered ? reference.data.map((r) => JSON.stringify(r)) : asMultiset(reference.data);
  if (JSON.stringify(a) !== JSON.stringify(b))
    return {
      ok: false,
      message: describe(`rows differ${ordered ? ' (ordered)' : ''}`, {
        endpoint: answer.data,
        fresh: reference.data,
      }),
    };
  return { ok: true, answer };
};
