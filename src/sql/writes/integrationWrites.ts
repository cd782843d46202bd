import type { ExternalDatabase } from '../../integrations/drivers';
import { closingParen, significant, SqlSyntaxError, tokenize } from '../../shared/sqlTokens';
import { positional, refuseOperatorsReadOtherwise, type Externals } from '../faces/integration/federation';
import type { OkAnswer, TableAnswer } from '../answers';
import type { CatalogResolver } from '../catalog/catalog';
import { externalError, SqlError, SqlErrorCode, toSqlError } from '../errors';
import { leadingKeyword, toDuckDbDialect, trimStatement } from '../lexical';
import type { MindsStatement } from '../parse';
import type { IntegrationWriteRecord, SqlPorts } from '../ports';

type WriteKind = IntegrationWriteRecord['statement'];

export type IntegrationWriteStatement = Extract<
  MindsStatement,
  { kind: 'CreateTable' | 'UpdateTable' | 'DropTable' | 'Insert' | 'Delete' }
>;

/** Rows per INSERT sent to the database (PostgreSQL binds at most 65,535 parameters). */
const batchRows = (columns: number) => Math.max(1, Math.min(1000, Math.floor(60_000 / Math.max(1, columns))));

/** The column type a DuckDB type is created as in the target database. */
const columnType = (duckType: string, engine: string): string => {
  const t = duckType.toUpperCase();
  const pg = engine === 'postgres';
  if (/^(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|U?INTEGER)$/.test(t)) return 'BIGINT';
  if (t === 'DOUBLE' || t === 'FLOAT' || t === 'REAL') return pg ? 'DOUBLE PRECISION' : 'DOUBLE';
  const decimal = /^DECIMAL\((\d+),\s*(\d+)\)$/.exec(t);
  if (decimal) return `${pg ? 'NUMERIC' : 'DECIMAL'}(${decimal[1]},${decimal[2]})`;
  if (t === 'BOOLEAN') return 'BOOLEAN';
  if (t === 'DATE') return 'DATE';
  if (t.startsWith('TIMESTAMP')) return pg ? 'TIMESTAMP' : 'DATETIME(6)';
  if (t === 'TIME') return 'TIME';
  return 'TEXT';
};

/**
 * `(SELECT …)`, `((SELECT …))` or `SELECT …`: the query inside the parentheses that enclose all of
 * it. Only those: `(SELECT 1) UNION (SELECT 2)` starts with one and ends with another.
 */
const innerQuery = (body: string) => {
  let text = trimStatement(body);
  for (;;) {
    const tokens = significant(tokenize(text, 'mysql'));
    const [first, last] = [tokens[0], tokens[tokens.length - 1]];
    if (!first || !last || first.kind !== 'symbol' || text[first.start] !== '(') return text;
    if (closingParen(text, tokens, 0) !== tokens.length - 1) return text;
    text = trimStatement(text.slice(first.end, last.start));
  }
};

/** Whether the rows come from a query (read here) rather than VALUES (sent to the database as written). */
export const isQuery = (body: string) => ['SELECT', 'WITH'].includes(leadingKeyword(innerQuery(body)));

/** Every row of a SELECT (MySQL dialect) in database `db`, with DuckDB's column types. */
export type SelectAll = (query: string, db: string, params: Record<string, unknown>) => Promise<TableAnswer>;

export type TableWriteStatement = Extract<MindsStatement, { kind: 'CreateTable' | 'Insert' }>;

/** How a write names itself in its errors: `INSERT INTO db.t`, `CREATE OR REPLACE TABLE files.f`. */
export const writeName = (statement: IntegrationWriteStatement, database: string) => {
  const verb = {
    CreateTable:
      statement.kind === 'CreateTable' && statement.replace ? 'CREATE OR REPLACE TABLE' : 'CREATE TABLE',
    Insert: 'INSERT INTO',
    UpdateTable: 'UPDATE',
    Delete: 'DELETE FROM',
    DropTable: 'DROP TABLE',
  }[statement.kind];
  return `${verb} ${database}.${statement.target.name}`;
};

/**
 * The rows of a write's query, read by the one path every SELECT of the endpoint takes (`selectAll`:
 * predictions, joins with models, native queries, files, integrations): a write can store whatever
 * the endpoint answers. Its failure is the statement's, named so, and nothing has been written yet.
 */
export const readSource = async (
  selectAll: SelectAll,
  statement: TableWriteStatement,
  database: string,
  db: string,
  params: Record<string, unknown>,
): Promise<TableAnswer> => {
  try {
    return await selectAll(innerQuery(statement.body), db, params);
  } catch (error) {
    const e = toSqlError(error);
    throw new SqlError(e.code, `${writeName(statement, database)}: ${e.message}`);
  }
};

/**
 * A part of the client's statement (MindsDB's MySQL dialect) for the database, its `:name`
 * placeholders bound: PostgreSQL reads DuckDB's (PostgreSQL's) dialect with `$n` parameters;
 * MySQL and MariaDB read the text as written, each placeholder a typed literal, unless it holds an
 * operator they read otherwise (`DELETE … WHERE name = 'a' || 'b'` is `name = 'a' OR 'b'` there:
 * other rows than meant). `sent` names the write and where it goes.
 */
const dialect = (db: ExternalDatabase, mysqlText: string, params: Record<string, unknown>, sent: string) => {
  if (db.dialect.name === 'postgres') {
    const duck = toDuckDbDialect(mysqlText);
    const missing = duck.placeholders.find((name) => !(name in params));
    if (missing !== undefined) throw new SqlError(SqlErrorCode.Invalid, `:${missing} has no value in params`);
    return positional(duck.sql, params, db.dialect);
  }
  refuseOperatorsReadOtherwise(mysqlText, 'mysql', `${sent} is sent to its database (${db.engine})`);
  const parts: string[] = [];
  let copied = 0;
  for (const t of tokenize(mysqlText, 'mysql')) {
    if (t.kind !== 'placeholder') continue;
    const name = mysqlText.slice(t.start + 1, t.end);
    if (!(name in params)) throw new SqlError(SqlErrorCode.Invalid, `:${name} has no value in params`);
    parts.push(mysqlText.slice(copied, t.start), db.dialect.literal(params[name]));
    copied = t.end;
  }
  parts.push(mysqlText.slice(copied));
  return { text: parts.join(''), params: [] };
};
/** Runs one statement built by `dialect`, in a transaction: the rows it changed. */
const runOne = (db: ExternalDatabase, statement: { text: string; params: unknown[] }) =>
  db.transaction(async (run) => (await run(statement.text, statement.params)).affected);

const insertRows = async (
  db: ExternalDatabase,
  run: (sql: string, params?: unknown[]) => Promise<{ affected: number }>,
  table: string,
  columns: string[],
  rows: unknown[][],
) => {
  let affected = 0;
  const size = batchRows(columns.length);
  const head = `INSERT INTO ${table} (${columns.map((c) => db.dialect.quote(c)).join(', ')}) VALUES `;
  for (let i = 0; i < rows.length; i += size) {
    const batch = rows.slice(i, i + size);
    const params = batch.flatMap((r) =>
      r.map((v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v)),
    );
    let n = 0;
    const tuples = batch.map(() => `(${columns.map(() => db.dialect.placeholder(++n)).join(', ')})`);
    affected += (await run(head + tuples.join(', '), params)).affected;
  }
  return affected;
};

/**
 * CREATE [OR REPLACE] TABLE db.t (SELECT …): the table made and its rows written in one
 * transaction; on MariaDB, which commits DDL at once, a table whose rows then fail is dropped.
 */
const createTable = async (
  ext: ExternalDatabase,
  table: string,
  statement: Extract<IntegrationWriteStatement, { kind: 'CreateTable' }>,
  source: TableAnswer,
): Promise<{ kind: WriteKind; rows: number }> => {
  const columns = source.column_names.map(
    (c, i) => `${ext.quote(c)} ${columnType(source.column_types[i]!, ext.engine)}`,
  );
  let created = false;
  try {
    const rows = await ext.transaction(async (run) => {
      if (statement.replace) await run(`DROP TABLE IF EXISTS ${table}`);
      await run(`CREATE TABLE ${table} (${columns.join(', ')})`);
      created = true;
      return insertRows(ext, run, table, source.column_names, source.data);
    });
    return { kind: statement.replace ? 'CREATE OR REPLACE TABLE' : 'CREATE TABLE', rows };
  } catch (error) {
    if (created && ext.engine !== 'postgres')
      await ext.transaction((run) => run(`DROP TABLE IF EXISTS ${table}`)).catch(() => undefined);
    throw error;
  }
};

/**
 * Writes into an external database's tables (MindsDB's CREATE TABLE db.t (SELECT …), INSERT,
 * UPDATE, DELETE, DROP TABLE), each in one transaction of that database: a SELECT's rows are read
 * here first (as the endpoint answers it: `readSource`), then written. Only a committed write is
 * recorded, as an event on the database's own stream; DuckDB's projections stay read-only.
 *
 * MariaDB commits DDL at once (no transactional CREATE/DROP): a CREATE TABLE whose rows then fail
 * is undone by dropping the table it made. CREATE OR REPLACE has dropped the old table by then.
 */
export const integrationWritesOf = (deps: {
  catalog: CatalogResolver;
  externals: Externals;
  selectAll: SelectAll;
  record: SqlPorts['recordIntegrationWrite'];
}) => {
  const write = async (
    statement: IntegrationWriteStatement,
    integration: string,
    db: string,
    params: Record<string, unknown>,
  ): Promise<{ kind: WriteKind; rows: number }> => {
    const ext = await deps.externals.get(integration);
    const table = ext.qualify(statement.target.name);
    switch (statement.kind) {
      case 'CreateTable': {
        if (!isQuery(statement.body))
          throw new SqlError(
            SqlErrorCode.Invalid,
            `${writeName(statement, integration)} takes a query: CREATE TABLE db.t (SELECT …)`,
          );
        const source = await readSource(deps.selectAll, statement, integration, db, params);
        return createTable(ext, table, statement, source);
      }
      case 'Insert': {
        if (isQuery(statement.body)) {
          const source = await readSource(deps.selectAll, statement, integration, db, params);
          const columns = statement.columns ?? source.column_names;
          if (columns.length !== source.column_names.length)
            throw new SqlError(
              SqlErrorCode.Invalid,
              `${writeName(statement, integration)} names ${columns.length} columns and its query gives ${source.column_names.length}`,
            );
          const rows = await ext.transaction((run) => insertRows(ext, run, table, columns, source.data));
          return { kind: 'INSERT', rows };
        }
        const list = statement.columns ? ` (${statement.columns.map((c) => ext.quote(c)).join(', ')})` : '';
        const body = dialect(ext, statement.body, params, writeName(statement, integration));
        return {
          kind: 'INSERT',
          rows: await runOne(ext, { ...body, text: `INSERT INTO ${table}${list} ${body.text}` }),
        };
      }
      case 'UpdateTable': {
        const set = dialect(ext, statement.set, params, writeName(statement, integration));
        return {
          kind: 'UPDATE',
          rows: await runOne(ext, { ...set, text: `UPDATE ${table} SET ${set.text}` }),
        };
      }
      case 'Delete': {
        const where = statement.where
          ? dialect(ext, statement.where, params, writeName(statement, integration))
          : { text: '', params: [] };
        const text = `DELETE FROM ${table}${statement.where ? ` WHERE ${where.text}` : ''}`;
        return { kind: 'DELETE', rows: await runOne(ext, { ...where, text }) };
      }
      case 'DropTable': {
        const text = `DROP TABLE ${statement.ifExists ? 'IF EXISTS ' : ''}${table}`;
        await ext.transaction((run) => run(text));
        return { kind: 'DROP TABLE', rows: 0 };
      }
      default: {
        const _exhaustive: never = statement;
        return _exhaustive;
      }
    }
  };

  return {
    /** The integration the statement writes into, or undefined when its target is not one. */
    integrationOf: (statement: IntegrationWriteStatement, db: string) =>
      deps.catalog.integration(statement.target.project ?? db),

    run: async (
      statement: IntegrationWriteStatement,
      integration: string,
      db: string,
      text: string,
      params: Record<string, unknown> = {},
    ): Promise<OkAnswer> => {
      const done = await write(statement, integration, db, params).catch((error: unknown) => {
        // The statement's own text failing to read (a quote never closed) is not the database's error.
        if (error instanceof SqlError || error instanceof SqlSyntaxError) throw toSqlError(error);
        throw externalError(integration, error);
      });
      try {
        await deps.record({
          database: integration,
          table: statement.target.name,
          statement: done.kind,
          text,
          rowsAffected: done.rows,
        });
      } catch (error) {
        throw new SqlError(
          SqlErrorCode.Internal,
          `${done.kind} into ${integration}.${statement.target.name} committed there (${done.rows} rows) but was not recorded in the log: ${(error as Error).message}`,
        );
      }
      return { type: 'ok', affected_rows: done.rows };
    },
  };
};
export type IntegrationWrites = ReturnType<typeof integrationWritesOf>;
