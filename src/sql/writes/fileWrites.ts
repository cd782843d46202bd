import fs from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import { isDomainError } from '../../shared/errors';
import { nameKey, SYSTEM_DATABASES } from '../../shared/names';
import { quoteMysqlIdent, quoteString } from '../../shared/quoting';
import type { OkAnswer, TableAnswer } from '../answers';
import { SqlError, SqlErrorCode, toSqlError } from '../errors';
import {
  isQuery,
  readSource,
  writeName,
  type SelectAll,
  type TableWriteStatement,
} from './integrationWrites';
import type { SqlPorts } from '../ports';

/**
 * What writing a file needs: the files service's upload steps (a file made in SQL is registered
 * as an upload is: analysed, stored, recorded as FileUploaded) and a DuckDB reader to write it with.
 */
type FileWritePorts = SqlPorts['files'] & {
  withReader<T>(work: (c: DuckDBConnection) => Promise<T>): Promise<T>;
};

/** Types a file keeps as the answer had them; nested values are kept as JSON, any other as text. */
const KEPT_TYPE =
  /^(BOOLEAN|TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|FLOAT|DOUBLE|DECIMAL\(\d+,\d+\)|VARCHAR|DATE|TIME|TIMESTAMP(_S|_MS|_NS)?|TIMESTAMP WITH TIME ZONE|UUID|JSON)$/;
const NESTED_TYPE = /(\[\d*\])$|^(STRUCT|MAP|UNION)\(/;
const fileType = (answerType: string) =>
  KEPT_TYPE.test(answerType) ? answerType : NESTED_TYPE.test(answerType) ? 'JSON' : 'VARCHAR';

type Column = { name: string; type: string };

const FILES = SYSTEM_DATABASES.files;

/**
 * Rows as answered (JSON cells) written to `target` as Parquet, each column of its type: the cells
 * go through newline-delimited JSON that DuckDB reads with the types spelled out, so a value the
 * type cannot hold fails here, before anything is registered.
 */
const writeParquet = async (c: DuckDBConnection, target: string, columns: Column[], rows: unknown[][]) => {
  const json = `${target}.ndjson`;
  const handle = await fs.promises.open(json, 'w');
  try {
    for (let i = 0; i < rows.length; i += 1000) {
      const lines = rows
        .slice(i, i + 1000)
        .map((row) => JSON.stringify(Object.fromEntries(columns.map((col, k) => [col.name, row[k] ?? null]))))
        .join('\n');
      await handle.write(`${lines}\n`);
    }
  } finally {
    await handle.close();
  }
  try {
    const types = columns.map((col) => `${quoteString(col.name)}: ${quoteString(col.type)}`).join(', ');
    await c.run(
      `COPY (SELECT * FROM read_json(${quoteString(json)}, format = 'newline_delimited', columns = {${types}})) TO ${quoteString(target)} (FORMAT parquet)`,
    );
  } catch (error) {
    // DuckDB names the intermediate file and a line of it, and advises reader options: none of it
    // is the client's. What is: the value that did not convert.
    const message = String((error as { message?: unknown }).message ?? error).split('\n')[0]!;
    const cause = /JSON transform error/.test(message) ? message.replace(/^.*in line \d+: /, '') : message;
    throw new SqlError(SqlErrorCode.Invalid, `a value does not fit its column's type: ${cause}`);
  } finally {
    await fs.promises.rm(json, { force: true });
  }
};

/** One write of a file at a time in this process: an INSERT reads the file it then replaces. */
const serialized = () => {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const run = (tails.get(key) ?? Promise.resolve()).then(work, work);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
};

/** How often a write whose file changed under it (another process wrote it) is made again. */
const ATTEMPTS = 8;

/**
 * Runs a write again, from its read, when its file changed between the read and the record (a
 * write on another process): each attempt reads what the last one lost to, so none is lost.
 */
const retriedOnChange = async <T>(work: () => Promise<T>): Promise<T> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!(isDomainError(error) && error.kind === 'Conflict') || attempt >= ATTEMPTS) throw error;
      // The other write may not be in this process's read model yet: give it time to arrive.
      await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt * (0.5 + Math.random())));
    }
  }
};

/**
 * MindsDB's writes into `files`: CREATE [OR REPLACE] TABLE files.f (SELECT …) makes a file of a
 * query's rows; INSERT INTO files.f (SELECT …) appends them (the file's columns named by the
 * query's, or by the INSERT's list; columns it leaves out are null), and makes the file when there
 * is none. Each write registers the whole new file as one upload (Parquet, the answer's column
 * types), so it applies entirely or not at all; the rows come from `readSource`, as any write's.
 */
export const fileWritesOf = (deps: { files: FileWritePorts; selectAll: SelectAll }) => {
  const oneAtATime = serialized();

  const register = async (name: string, columns: Column[], rows: unknown[][], expected?: string | null) => {
    const target = deps.files.tempPath();
    try {
      await deps.files.withReader((c) => writeParquet(c, target, columns, rows));
    } catch (error) {
      await fs.promises.rm(target, { force: true });
      throw error;
    }
    // Removes `target` whatever happens.
    await deps.files.register(name, target, `${name}.parquet`, expected);
  };

  /** The query's columns, each named once (a file's columns are told apart by name, in any case). */
  const columnsOf = (where: string, names: readonly string[], types: readonly string[]): Column[] => {
    const seen = new Set<string>();
    for (const n of names) {
      if (seen.has(nameKey(n)))
        throw new SqlError(SqlErrorCode.Invalid, `${where}: the column ${n} is named twice`);
      seen.add(nameKey(n));
    }
    return names.map((n, i) => ({ name: n, type: fileType(types[i]!) }));
  };

  const create = async (where: string, name: string, source: TableAnswer, expected?: string | null) => {
    await register(name, columnsOf(where, source.column_names, source.column_types), source.data, expected);
    return source.data.length;
  };

  /** The file's rows followed by the query's, in the file's columns and types. */
  const append = async (where: string, name: string, source: TableAnswer, db: string, expected: string) => {
    const file = await deps.selectAll(`SELECT * FROM files.${quoteMysqlIdent(name)}`, db, {});
    const columns = columnsOf(where, file.column_names, file.column_types);
    const given = source.column_names;
    const position = new Map(columns.map((col, i) => [nameKey(col.name), i]));
    const unknown = given.filter((n) => !position.has(nameKey(n)));
    if (unknown.length)
      throw new SqlError(
        SqlErrorCode.Binder,
        `${where}: the file has no column ${unknown.join(', ')} (its columns: ${columns.map((c) => c.name).join(', ')})`,
      );
    const placed = given.map((n) => position.get(nameKey(n))!);
    const added = source.data.map((row) => {
      const out: unknown[] = columns.map(() => null);
      placed.forEach((to, from) => (out[to] = row[from]));
      return out;
    });
    await register(name, columns, [...file.data, ...added], expected);
    return added.length;
  };

  const write = async (statement: TableWriteStatement, db: string, params: Record<string, unknown>) => {
    const where = writeName(statement, FILES);
    const name = statement.target.name;
    if (!isQuery(statement.body))
      throw new SqlError(
        SqlErrorCode.Invalid,
        `${where} takes a query: ${statement.kind === 'Insert' ? 'INSERT INTO files.f (SELECT …)' : 'CREATE TABLE files.f (SELECT …)'}`,
      );
    // The digest first, the rows after: rows newer than the digest make a conflict (and a retry),
    // never an append onto rows older than the file it replaces.
    const digest = await deps.files.digestOf(name);
    const exists = digest !== null;
    if (statement.kind === 'CreateTable' && !statement.replace && exists)
      throw new SqlError(
        SqlErrorCode.Conflict,
        `${where}: the file ${name} exists already (CREATE OR REPLACE TABLE replaces it)`,
      );
    const source = await readSource(deps.selectAll, statement, FILES, db, params);
    // An INSERT's column list names the query's columns, in order.
    const named = (statement.kind === 'Insert' && statement.columns) || source.column_names;
    if (named.length !== source.column_names.length)
      throw new SqlError(
        SqlErrorCode.Invalid,
        `${where} names ${named.length} columns and its query gives ${source.column_names.length}`,
      );
    const rows = { ...source, column_names: named };
    if (statement.kind === 'Insert')
      return digest !== null ? append(where, name, rows, db, digest) : create(where, name, rows, null);
    return create(where, name, rows, statement.replace ? undefined : null);
  };

  return {
    /** Whether the statement writes into `files` (its own database, or the one in use). */
    isFileWrite: (statement: { target: { project: string | null } }, db: string) =>
      nameKey(statement.target.project ?? db) === FILES,

    run: async (
      statement: TableWriteStatement,
      db: string,
      params: Record<string, unknown> = {},
    ): Promise<OkAnswer> => {
      const where = writeName(statement, FILES);
      try {
        const rows = await oneAtATime(nameKey(statement.target.name), () =>
          retriedOnChange(() => write(statement, db, params)),
        );
        return { type: 'ok', affected_rows: rows };
      } catch (error) {
        const e = toSqlError(error);
        throw e.message.startsWith(where) ? e : new SqlError(e.code, `${where}: ${e.message}`);
      }
    },
  };
};
export type FileWrites = ReturnType<typeof fileWritesOf>;
