import type { ExternalDatabase } from '../integrations/drivers';
import type { ExternalDatabases } from '../databases/pools';
import type { OkAnswer, TableAnswer } from './answers';
import type { CatalogResolver } from './catalog';
import { externalError, SqlError, SqlErrorCode } from './errors';
import { toDuckDbDialect } from './lexical';
import type { MindsStatement } from './parse';

export type IntegrationWriteStatement = Extract<
  MindsStatement,
  { kind: 'CreateTable' | 'UpdateTable' | 'DropTable' | 'Insert' | 'Delete' }
>;

type WriteKind = 'CREATE TABLE' | 'CREATE OR REPLACE TABLE' | 'INSERT' | 'UPDATE' | 'DELETE' | 'DROP TABLE';

export type RecordedWrite = {
  database: string;
  table: string;
  statement: WriteKind;
  text: string;
  rowsAffected: number;
};

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

/** `(SELECT …)` or `SELECT …`: the query inside. */
const innerQuery = (body: string) => {
  const b = body.trim();
  return b.startsWith('(') && b.endsWith(')') ? b.slice(1, -1).trim() : b;
};
const isQuery = (body: string) => /^(select|with)\b/i.test(innerQuery(body));

/**
 * Writes into an external database's tables (MindsDB's CREATE TABLE db.t (SELECT …), INSERT,
 * UPDATE, DELETE, DROP TABLE), each in one transaction of that database: a SELECT's rows are read
 * here first (from any source the SQL endpoint reads), then written. Only a committed write is
 * recorded, as an event on the database's own stream; DuckDB's projections and files stay read-only.
 *
 * MariaDB commits DDL at once (no transactional CREATE/DROP): a CREATE TABLE whose rows then fail
 * is undone by dropping the table it made. CREATE OR REPLACE has dropped the old table by then.
 */
export const integrationWritesOf = (deps: {
  catalog: CatalogResolver;
  externals: ExternalDatabases;
  /** Every row of a SELECT (MySQL dialect) in database `db`, with DuckDB's column types. */
  selectAll: (query: string, db: string) => Promise<TableAnswer>;
  record: (write: RecordedWrite) => Promise<unknown>;
}) => {
  /** The statement's text for the database: PostgreSQL reads DuckDB's (PostgreSQL's) dialect. */
  const dialect = (db: ExternalDatabase, mysqlText: string) =>
    db.engine === 'postgres' ? toDuckDbDialect(mysqlText).sql : mysqlText;

  const insertRows = async (
    db: ExternalDatabase,
    run: (sql: string, params?: unknown[]) => Promise<{ affected: number }>,
    table: string,
    columns: string[],
    rows: unknown[][],
  ) => {
    let affected = 0;
    const size = batchRows(columns.length);
    const head = `INSERT INTO ${table} (${columns.map((c) => db.quote(c)).join(', ')}) VALUES `;
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    for (let i = 0; i < rows.length; i += size) {
      const batch = rows.slice(i, i + size);
      const params = batch.flatMap((r) =>
        r.map((v) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v)),
      );
      affected += (await run(head + batch.map(() => tuple).join(', '), params)).affected;
    }
    return affected;
  };

  const write = async (
    statement: IntegrationWriteStatement,
    integration: string,
    db: string,
  ): Promise<{ kind: WriteKind; rows: number }> => {
    const ext = await deps.externals.get(integration);
    const table = ext.quote(statement.target.name);
    switch (statement.kind) {
      case 'CreateTable': {
        if (!isQuery(statement.body))
          throw new SqlError(
            SqlErrorCode.Invalid,
            `CREATE TABLE ${integration}.${statement.target.name} takes a query: CREATE TABLE db.t (SELECT …)`,
          );
        const source = await deps.selectAll(innerQuery(statement.body), db);
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
      }
      case 'Insert': {
        if (isQuery(statement.body)) {
          const source = await deps.selectAll(innerQuery(statement.body), db);
          const columns = statement.columns ?? source.column_names;
          if (columns.length !== source.column_names.length)
            throw new SqlError(
              SqlErrorCode.Invalid,
              `INSERT INTO ${integration}.${statement.target.name} names ${columns.length} columns and its query gives ${source.column_names.length}`,
            );
          const rows = await ext.transaction((run) => insertRows(ext, run, table, columns, source.data));
          return { kind: 'INSERT', rows };
        }
        const list = statement.columns ? ` (${statement.columns.map((c) => ext.quote(c)).join(', ')})` : '';
        const text = `INSERT INTO ${table}${list} ${dialect(ext, statement.body)}`;
        return { kind: 'INSERT', rows: await ext.transaction(async (run) => (await run(text)).affected) };
      }
      case 'UpdateTable': {
        const text = `UPDATE ${table} SET ${dialect(ext, statement.set)}`;
        return { kind: 'UPDATE', rows: await ext.transaction(async (run) => (await run(text)).affected) };
      }
      case 'Delete': {
        const text = `DELETE FROM ${table}${statement.where ? ` WHERE ${dialect(ext, statement.where)}` : ''}`;
        return { kind: 'DELETE', rows: await ext.transaction(async (run) => (await run(text)).affected) };
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
    ): Promise<OkAnswer> => {
      const done = await write(statement, integration, db).catch((error: unknown) => {
        if (error instanceof SqlError) throw error;
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
