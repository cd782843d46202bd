import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import type { TestApp } from './app';
import { givenFile, uniqueName } from './world';

/**
 * Generated small tables (written as CSV files) and generated SELECTs over them, for the SQL
 * equivalence properties (test/sql/*.property.spec.ts). The SQL is written in the common ground of
 * the endpoint's MySQL-flavoured dialect and DuckDB's: unquoted lower-case names, single-quoted
 * literals without backslashes, no `||`, no `/`, no double quotes; so the same text means the same
 * query to both.
 */

/** The column kinds a generated file holds, and the DuckDB type the upload must infer for each. */
export type Kind = 'int' | 'double' | 'text' | 'bool' | 'date';
export const DUCKDB_TYPE: Record<Kind, string> = {
  int: 'BIGINT',
  double: 'DOUBLE',
  text: 'VARCHAR',
  bool: 'BOOLEAN',
  date: 'DATE',
};
const KINDS: Kind[] = ['int', 'double', 'text', 'bool', 'date'];

export type Column = { name: string; kind: Kind };
/** A table as generated: its columns (`id` first) and each row's cells as CSV text, null for NULL. */
export type GeneratedTable = { columns: Column[]; rows: (string | null)[][] };

/** Text cells: every one holds a letter none of BOOLEAN, BIGINT, DOUBLE, DATE casts, so the column stays VARCHAR. */
const WORDS = ['apple', 'Apple', 'a b', 'x,y', 'say "hi"', "it's", 'back\\slash', 'ünï', '日本', '  pad '];
const TEXT_CHARS = ['a', 'b', 'c', 'Z', 'é', '日', ' ', ',', '"', "'", '\\', '%', '_', '-'];
const textCell = fc.oneof(
  fc.constantFrom(...WORDS),
  fc
    .tuple(fc.constantFrom('a', 'b', 'Z', 'é'), fc.array(fc.constantFrom(...TEXT_CHARS), { maxLength: 4 }))
    .map(([first, rest]) => first + rest.join('')),
);

const day = (offset: number) =>
  new Date(Date.UTC(2020, 0, 1) + offset * 86_400_000).toISOString().slice(0, 10);

/** Each kind's cells, and a witness: a value that pins the inferred type (an integer outside 0/1, a fraction). */
const CELLS: Record<Kind, { any: fc.Arbitrary<string>; witness: fc.Arbitrary<string> }> = {
  int: {
    any: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -1000, max: 1000 })).map(String),
    witness: fc.constantFrom(2, 3, -2, 7, 1000).map(String),
  },
  double: {
    any: fc.integer({ min: -40, max: 40 }).map((n) => String(n / 4)),
    witness: fc.integer({ min: -20, max: 19 }).map((n) => String((2 * n + 1) / 4)),
  },
  text: { any: textCell, witness: textCell },
  bool: { any: fc.constantFrom('true', 'false'), witness: fc.constantFrom('true', 'false') },
  date: {
    any: fc.integer({ min: 0, max: 60 }).map(day),
    witness: fc.integer({ min: 0, max: 2000 }).map(day),
  },
};

/**
 * A table of 1 to `maxRows` rows: `id` (10, 11, …: unique, never only 0/1) and 1 to 4 columns of
 * generated kinds with NULLs; the first row holds a witness in every column.
 */
export const generatedTable = (maxRows = 10): fc.Arbitrary<GeneratedTable> =>
  fc.array(fc.constantFrom(...KINDS), { minLength: 1, maxLength: 4 }).chain((kinds) => {
    const columns: Column[] = [
      { name: 'id', kind: 'int' },
      ...kinds.map((kind, i) => ({ name: `c${i + 1}`, kind })),
    ];
    const witness = fc.tuple(...kinds.map((k) => CELLS[k].witness));
    const row = fc.tuple(...kinds.map((k) => fc.option(CELLS[k].any, { nil: null, freq: 4 })));
    return fc
      .tuple(witness, fc.array(row, { maxLength: maxRows - 1 }))
      .map(([first, rest]): GeneratedTable => ({
        columns,
        rows: [first, ...rest].map((cells, i) => [String(10 + i), ...cells]),
      }));
  });

/** The table as CSV: a header, text always quoted (quotes doubled), NULL an empty field. */
export const csvText = (t: GeneratedTable) => {
  const cell = (c: Column, v: string | null) =>
    v === null ? '' : c.kind === 'text' ? `"${v.replace(/"/g, '""')}"` : v;
  return [
    t.columns.map((c) => c.name).join(','),
    ...t.rows.map((r) => r.map((v, i) => cell(t.columns[i]!, v)).join(',')),
  ].join('\n');
};

/** Writes the table as `<name>.csv` in a new temporary directory; returns the file's path. */
export const writeCsv = (t: GeneratedTable, name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-generated-'));
  const file = path.join(dir, `${name}.csv`);
  fs.writeFileSync(file, `${csvText(t)}\n`);
  return file;
};

/** A table a query reads: its SQL name (`files.x`), alias and columns. */
export type Source = { table: string; alias: string; columns: Column[] };

type Typed = { sql: string; kind: Kind };

const isNumeric = (k: Kind) => k === 'int' || k === 'double';
/** Kinds two expressions may be compared as: numbers with numbers, else the same kind. */
const comparable = (a: Kind, b: Kind) => a === b || (isNumeric(a) && isNumeric(b));

export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** Literals as both dialects read them (negative numbers parenthesised: `a - -1` would open a comment). */
const literalOf = (kind: Kind): fc.Arbitrary<string> => {
  switch (kind) {
    case 'int':
      // Ids are 10 and up; most cells are near 0.
      return fc.integer({ min: -5, max: 20 }).map((n) => (n < 0 ? `(${n})` : String(n)));
    case 'double':
      return fc.integer({ min: -20, max: 20 }).map((n) => (n < 0 ? `(${n / 4})` : String(n / 4)));
    case 'text':
      // No backslash: the endpoint reads MySQL's backslash escapes in literals, DuckDB none.
      return fc
        .oneof(
          fc.constantFrom(...WORDS.filter((w) => !w.includes('\\'))),
          fc.constantFrom('a', 'b', 'Z', 'é', 'ab', ''),
        )
        .map(sqlString);
    case 'bool':
      return fc.constantFrom('TRUE', 'FALSE');
    case 'date':
      return fc.integer({ min: 0, max: 60 }).map((n) => `DATE '${day(n)}'`);
  }
};

/** The columns of the sources, qualified by alias. */
const columnsOf = (sources: Source[]): Typed[] =>
  sources.flatMap((s) => s.columns.map((c) => ({ sql: `${s.alias}.${c.name}`, kind: c.kind })));

/** SELECT-building blocks over some sources. */
export const sqlOver = (sources: Source[]) => {
  const columns = columnsOf(sources);
  const columnOf = (kinds: Kind[]) => {
    const fit = columns.filter((c) => kinds.includes(c.kind));
    return fit.length ? fc.constantFrom(...fit) : undefined;
  };
  const anyColumn = fc.constantFrom(...columns);

  /** An expression of `kind` (a number when `kind` is int or double). */
  const expr = (kind: Kind, depth: number): fc.Arbitrary<Typed> => {
    const literal = literalOf(kind).map((sql): Typed => ({ sql, kind }));
    const column = columnOf(isNumeric(kind) ? ['int', 'double'] : [kind]);
    const leaf = column
      ? fc.oneof({ weight: 4, arbitrary: column }, { weight: 1, arbitrary: literal })
      : literal;
    if (depth <= 0) return leaf;
    const sub = (k: Kind) => expr(k, depth - 1);
    const compound: fc.Arbitrary<Typed>[] = [];
    if (isNumeric(kind)) {
      const num = () => fc.oneof(sub('int'), sub('double'));
      const numeric = (a: Typed, b: Typed): Kind =>
        a.kind === 'double' || b.kind === 'double' ? 'double' : 'int';
      compound.push(
        fc.tuple(num(), fc.constantFrom('+', '-', '*'), num()).map(([a, op, b]) => ({
          sql: `(${a.sql} ${op} ${b.sql})`,
          kind: numeric(a, b),
        })),
        num().map((a) => ({ sql: `abs(${a.sql})`, kind: a.kind })),
      );
    }
    if (kind === 'text')
      compound.push(
        sub('text').map((a) => ({ sql: `lower(${a.sql})`, kind })),
        sub('text').map((a) => ({ sql: `upper(${a.sql})`, kind })),
        fc.tuple(sub('text'), sub('text')).map(([a, b]) => ({ sql: `concat(${a.sql}, ${b.sql})`, kind })),
        sub('text').map((a) => ({ sql: `substr(${a.sql}, 1, 2)`, kind })),
      );
    if (kind !== 'bool')
      compound.push(
        fc
          .tuple(sub(kind), literalOf(kind))
          .map(([a, b]) => ({ sql: `coalesce(${a.sql}, ${b})`, kind: a.kind })),
        fc.tuple(predicate(depth - 1), sub(kind), sub(kind)).map(([p, a, b]) => ({
          sql: `CASE WHEN ${p} THEN ${a.sql} ELSE ${b.sql} END`,
          kind: isNumeric(kind) && (a.kind === 'double' || b.kind === 'double') ? 'double' : kind,
        })),
      );
    else compound.push(predicate(depth - 1).map((sql) => ({ sql: `(${sql})`, kind })));
    return fc.oneof({ weight: 3, arbitrary: leaf }, { weight: 1, arbitrary: fc.oneof(...compound) });
  };

  /** A predicate: comparisons, NULL tests, BETWEEN, IN, LIKE, boolean columns, under AND/OR/NOT. */
  const predicate = (depth: number): fc.Arbitrary<string> => {
    const sub = (k: Kind) => expr(k, Math.min(depth, 1));
    const comparison = fc
      .constantFrom<Kind>('int', 'double', 'text', 'date', 'bool')
      .chain((k) =>
        fc.tuple(
          sub(k),
          k === 'bool' ? fc.constantFrom('=', '<>') : fc.constantFrom('=', '<>', '<', '<=', '>', '>='),
          sub(k),
        ),
      )
      .filter(([a, , b]) => comparable(a.kind, b.kind))
      .map(([a, op, b]) => `${a.sql} ${op} ${b.sql}`);
    const leaves: fc.Arbitrary<string>[] = [
      comparison,
      comparison,
      fc.tuple(anyColumn, fc.boolean()).map(([c, not]) => `${c.sql} IS ${not ? 'NOT ' : ''}NULL`),
      fc
        .constantFrom<Kind>('int', 'double', 'date')
        .chain((k) => fc.tuple(sub(k), fc.boolean(), literalOf(k), literalOf(k)))
        .map(([a, not, lo, hi]) => `${a.sql} ${not ? 'NOT ' : ''}BETWEEN ${lo} AND ${hi}`),
      fc
        .constantFrom<Kind>('int', 'text')
        .chain((k) =>
          fc.tuple(
            sub(k),
            fc.boolean(),
            fc.array(fc.oneof({ weight: 4, arbitrary: literalOf(k) }, fc.constant('NULL')), {
              minLength: 1,
              maxLength: 3,
            }),
          ),
        )
        .map(([a, not, list]) => `${a.sql} ${not ? 'NOT ' : ''}IN (${list.join(', ')})`),
      fc
        .tuple(sub('text'), fc.boolean(), fc.constantFrom('a%', '%a%', '_', '%p%', 'A%', '%'))
        .map(([a, not, pattern]) => `${a.sql} ${not ? 'NOT ' : ''}LIKE '${pattern}'`),
      fc.constantFrom<Kind>('int', 'text', 'date').chain((k) => sub(k).map((a) => `${a.sql} = NULL`)),
    ];
    const bools = columnOf(['bool']);
    if (bools) leaves.push(bools.map((c) => c.sql));
    if (depth <= 0) return fc.oneof(...leaves);
    const inner = predicate(depth - 1);
    return fc.oneof(
      { weight: 3, arbitrary: fc.oneof(...leaves) },
      { weight: 1, arbitrary: inner.map((p) => `NOT (${p})`) },
      { weight: 1, arbitrary: fc.tuple(inner, inner).map(([a, b]) => `(${a}) AND (${b})`) },
      { weight: 2, arbitrary: fc.tuple(inner, inner).map(([a, b]) => `(${a}) OR (${b})`) },
    );
  };

  // Mostly of the kinds the sources hold (a kind no column has makes constants only).
  const present = KINDS.filter((k) => columns.some((c) => c.kind === k));
  const anyExpr = (depth: number) =>
    fc
      .oneof({ weight: 4, arbitrary: fc.constantFrom(...present) }, fc.constantFrom(...KINDS))
      .chain((k) => expr(k, depth));
  /** An expression reading a column (a GROUP BY key: a bare number there is a position). */
  const columnExpr = (depth: number) =>
    fc.oneof(
      anyColumn,
      anyExpr(depth).filter((e) => /\b[ab]\.(id|c\d)\b/.test(e.sql)),
    );
  return { expr, anyExpr, columnExpr, predicate, anyColumn, columns };
};

/** FROM one file, or two joined (inner, left or cross), with the sources it names. */
export const fromClause = (
  a: { table: string; columns: Column[] },
  b: { table: string; columns: Column[] },
): fc.Arbitrary<{ sql: string; sources: Source[] }> => {
  const one: Source[] = [{ table: a.table, alias: 'a', columns: a.columns }];
  const two: Source[] = [...one, { table: b.table, alias: 'b', columns: b.columns }];
  const keys = a.columns.flatMap((x) =>
    b.columns.filter((y) => comparable(x.kind, y.kind)).map((y) => `a.${x.name} = b.${y.name}`),
  );
  const on = fc.tuple(fc.constantFrom(...keys), fc.option(sqlOver(two).predicate(0), { nil: undefined }));
  return fc.oneof(
    fc.constant({ sql: `${a.table} AS a`, sources: one }),
    fc.tuple(fc.constantFrom('JOIN', 'LEFT JOIN'), on).map(([join, [key, extra]]) => ({
      sql: `${a.table} AS a ${join} ${b.table} AS b ON ${key}${extra ? ` AND (${extra})` : ''}`,
      sources: two,
    })),
    fc.constant({ sql: `${a.table} AS a CROSS JOIN ${b.table} AS b`, sources: two }),
  );
};

/** A generated SELECT: its text, and whether its ORDER BY orders every output column (a total order). */
export type GeneratedQuery = { sql: string; ordered: boolean };

/** `ORDER BY 1, …, n` (each ASC or DESC) and a LIMIT, or nothing. */
const orderAndLimit = (width: number) =>
  fc.option(
    fc
      .tuple(fc.array(fc.boolean(), { minLength: width, maxLength: width }), fc.integer({ min: 1, max: 8 }))
      .map(([desc, limit]) => ({
        sql: ` ORDER BY ${desc.map((d, i) => `${i + 1}${d ? ' DESC' : ''}`).join(', ')} LIMIT ${limit}`,
      })),
    { nil: undefined },
  );

/** Aggregates of any kind (sum and avg of numbers only). */
const aggregate = (s: ReturnType<typeof sqlOver>) =>
  fc.oneof(
    fc.constant('count(*)'),
    s.anyExpr(1).map((e) => `count(${e.sql})`),
    s.anyColumn.map((c) => `count(DISTINCT ${c.sql})`),
    fc
      .tuple(fc.constantFrom('sum', 'avg'), fc.oneof(s.expr('int', 1), s.expr('double', 1)))
      .map(([f, e]) => `${f}(${e.sql})`),
    fc.tuple(fc.constantFrom('min', 'max'), s.anyExpr(1)).map(([f, e]) => `${f}(${e.sql})`),
  );

/** Window functions whose answers do not depend on the order of peers (orders end in every id). */
const windowFunction = (s: ReturnType<typeof sqlOver>, sources: Source[]) => {
  const ids = sources.map((x) => `${x.alias}.id`).join(', ');
  const partition = fc.option(s.anyColumn, { nil: undefined }).map((c) => (c ? `PARTITION BY ${c.sql}` : ''));
  return fc.oneof(
    partition.map((p) => `row_number() OVER (${p} ORDER BY ${ids})`),
    fc
      .tuple(fc.constantFrom('rank', 'dense_rank'), partition, s.anyExpr(1))
      .map(([f, p, e]) => `${f}() OVER (${p} ORDER BY ${e.sql})`),
    fc
      .tuple(fc.constantFrom('sum', 'min', 'max', 'count'), partition, s.expr('int', 1))
      .map(([f, p, e]) => `${f}(${e.sql}) OVER (${p})`),
    partition.map((p) => `count(*) OVER (${p})`),
    fc
      .tuple(fc.constantFrom('lag', 'lead'), partition, s.anyExpr(0))
      .map(([f, p, e]) => `${f}(${e.sql}) OVER (${p} ORDER BY ${ids})`),
    s
      .expr('double', 1)
      .map((e) => `sum(${e.sql}) OVER (ORDER BY ${ids} ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)`),
  );
};

const aliased = (items: string[]) => items.map((e, i) => `${e} AS x${i}`).join(', ');

/** A SELECT of plain expressions, optionally filtered, DISTINCT, ordered and limited. */
export const plainSelect = (from: { sql: string; sources: Source[] }): fc.Arbitrary<GeneratedQuery> => {
  const s = sqlOver(from.sources);
  return fc
    .tuple(
      fc.array(s.anyExpr(2), { minLength: 1, maxLength: 4 }),
      fc.option(s.predicate(1), { nil: undefined, freq: 2 }),
      fc.boolean(),
    )
    .chain(([items, where, distinct]) =>
      orderAndLimit(items.length).map((order) => ({
        sql: `SELECT ${distinct ? 'DISTINCT ' : ''}${aliased(items.map((e) => e.sql))} FROM ${from.sql}${where ? ` WHERE ${where}` : ''}${order?.sql ?? ''}`,
        ordered: order !== undefined,
      })),
    );
};

/** A SELECT with GROUP BY (or one group), aggregates, maybe HAVING, ordering and LIMIT. */
export const aggregateSelect = (from: { sql: string; sources: Source[] }): fc.Arbitrary<GeneratedQuery> => {
  const s = sqlOver(from.sources);
  return fc
    .tuple(
      fc.array(s.columnExpr(1), { maxLength: 2 }),
      fc.array(aggregate(s), { minLength: 1, maxLength: 3 }),
      fc.option(s.predicate(1), { nil: undefined, freq: 2 }),
      fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
    )
    .chain(([keys, aggs, where, having]) => {
      const items = [...keys.map((k) => k.sql), ...aggs];
      return orderAndLimit(items.length).map((order) => ({
        sql:
          `SELECT ${aliased(items)} FROM ${from.sql}${where ? ` WHERE ${where}` : ''}` +
          (keys.length ? ` GROUP BY ${keys.map((k) => k.sql).join(', ')}` : '') +
          (having !== undefined ? ` HAVING count(*) >= ${having}` : '') +
          (order?.sql ?? ''),
        ordered: order !== undefined,
      }));
    });
};

/** A SELECT of columns beside window functions, maybe filtered, ordered and limited. */
export const windowSelect = (from: { sql: string; sources: Source[] }): fc.Arbitrary<GeneratedQuery> => {
  const s = sqlOver(from.sources);
  return fc
    .tuple(
      fc.array(s.anyExpr(1), { maxLength: 2 }),
      fc.array(windowFunction(s, from.sources), { minLength: 1, maxLength: 2 }),
      fc.option(s.predicate(1), { nil: undefined, freq: 2 }),
    )
    .chain(([plain, windows, where]) => {
      const items = [...plain.map((e) => e.sql), ...windows];
      return orderAndLimit(items.length).map((order) => ({
        sql: `SELECT ${aliased(items)} FROM ${from.sql}${where ? ` WHERE ${where}` : ''}${order?.sql ?? ''}`,
        ordered: order !== undefined,
      }));
    });
};

/** Any of the three shapes. */
export const anySelect = (from: { sql: string; sources: Source[] }) =>
  fc.oneof(plainSelect(from), aggregateSelect(from), windowSelect(from));

/** A generated table uploaded as a CSV file: its name as a table (`files.<name>`). */
export const uploadGenerated = async (t: TestApp, table: GeneratedTable, prefix = 'gen') => {
  const name = uniqueName(prefix);
  await givenFile(t, writeCsv(table, name), name);
  return `files.${name}`;
};

/**
 * Two generated tables, a generated SELECT over them (naming them `files.<a>` and `files.<b>`) and
 * whatever else a property draws with them (`extra`).
 */
export const selectOverTwoTables = <E>(extra: fc.Arbitrary<E>, maxRows?: number) =>
  fc.tuple(generatedTable(maxRows), generatedTable(maxRows)).chain(([a, b]) =>
    fc.record({
      a: fc.constant(a),
      b: fc.constant(b),
      query: fromClause(
        { table: 'files.<a>', columns: a.columns },
        { table: 'files.<b>', columns: b.columns },
      ).chain(anySelect),
      extra,
    }),
  );

/** The query of `selectOverTwoTables` over its two tables, uploaded as files. */
export const uploadedSelect = async (
  t: TestApp,
  drawn: { a: GeneratedTable; b: GeneratedTable; query: GeneratedQuery },
) => {
  const [ta, tb] = [await uploadGenerated(t, drawn.a), await uploadGenerated(t, drawn.b)];
  return drawn.query.sql.split('files.<a>').join(ta).split('files.<b>').join(tb);
};
