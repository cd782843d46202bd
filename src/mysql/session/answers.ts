import { columnOf } from '../protocol/columns';
import { fail, MysqlError, ok, table, textTable, type Outcome } from '../outcome';
import type { SqlAnswer } from '../port';
import type { Statement } from './classify';
import { isSignificant, quoteIdentifier, quoteString, tokenize, unquoteString } from './lexer';
import { likeMatcher } from './like';
import type { Session } from './session';
import { literalOf } from './substitute';
import type { VariableValue } from './variables';

type Local = Exclude<Statement, { kind: 'engine' }>;

const asError = (answer: SqlAnswer): Outcome | undefined =>
  answer.type === 'error' ? fail(answer.error_code, answer.error_message) : undefined;

/**
 * Rows filtered by a client's WHERE text, evaluated by the engine over the rows as a VALUES list
 * (so the WHERE means what it means in any other SELECT).
 */
const whereFilter = async (
  session: Session,
  columns: string[],
  rows: VariableValue[][],
  where: string,
  signal?: AbortSignal,
): Promise<Outcome | VariableValue[][]> => {
  if (rows.length === 0) return rows;
  const values = rows
    .map((r) => `(${r.map((v) => literalOf(v === null ? null : String(v))).join(', ')})`)
    .join(', ');
  const answer = await session.query(
    `SELECT * FROM (VALUES ${values}) AS shown(${columns.map(quoteIdentifier).join(', ')}) WHERE ${where}`,
    signal,
  );
  if (answer.type !== 'table') return asError(answer) ?? rows;
  return answer.data.map((r) => r.map((v) => (v === null ? null : String(v))));
};

const likeFilter = (rows: VariableValue[][], like: string | undefined, column = 0) => {
  if (like === undefined) return rows;
  const matches = likeMatcher(like);
  return rows.filter((r) => matches(String(r[column] ?? '')));
};

/** A table's columns and DuckDB types, as the engine answers `SELECT * FROM db.t LIMIT 0`. */
export const describeTable = async (
  session: Session,
  db: string | undefined,
  table: string,
  signal?: AbortSignal,
): Promise<Outcome | { names: string[]; types: string[] }> => {
  const target = `${quoteIdentifier(db ?? session.database())}.${quoteIdentifier(table)}`;
  const answer = await session.query(`SELECT * FROM ${target} LIMIT 0`, signal);
  if (answer.type === 'table') return { names: answer.column_names, types: answer.column_types };
  return (
    asError(answer) ??
    fail(MysqlError.UnknownTable, `Table '${db ?? session.database()}.${table}' is not a table`)
  );
};

/** The MySQL column type a DuckDB type is shown as in SHOW COLUMNS and SHOW CREATE TABLE. */
export const mysqlTypeName = (duckType: string): string => {
  const c = columnOf('', duckType);
  const unsigned = /^U(TINY|SMALL|BIG)?INT/.test(duckType.toUpperCase()) ? ' unsigned' : '';
  switch (c.kind) {
    case 'integer':
      return `${{ 1: 'tinyint', 2: 'smallint', 4: 'int', 8: 'bigint' }[c.width] ?? 'bigint'}${unsigned}`;
    case 'boolean':
      return 'tinyint(1)';
    case 'decimal': {
      const m = /^DECIMAL\((\d+),\s*(\d+)\)$/i.exec(duckType.trim());
      return m ? `decimal(${m[1]},${m[2]})` : 'decimal(65,0)';
    }
    case 'float':
      return 'float';
    case 'double':
      return 'double';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime(6)';
    case 'time':
      return 'time(6)';
    case 'json':
      return 'json';
    case 'blob':
      return 'longblob';
    case 'string':
    case 'interval':
    case 'null':
      return 'text';
    default: {
      const _exhaustive: never = c.kind;
      return _exhaustive;
    }
  }
};

const isText = (mysqlType: string) => mysqlType === 'text';

/** The value of `SET x = <text>`: a literal, ON/OFF/DEFAULT, another variable, or any expression (the engine's). */
const valueOfText = async (
  session: Session,
  text: string,
  signal?: AbortSignal,
): Promise<{ value: VariableValue | undefined } | Outcome> => {
  const tokens = tokenize(text).filter(isSignificant);
  const only = tokens.length === 1 ? tokens[0]! : undefined;
  if (only?.kind === 'number') return { value: Number(only.text) };
  if (only?.kind === 'string') return { value: unquoteString(only.text) };
  if (only?.kind === 'word' || only?.kind === 'quoted') {
    const word = only.text.toUpperCase();
    if (word === 'DEFAULT') return { value: undefined };
    if (word === 'NULL') return { value: null };
    return { value: only.kind === 'quoted' ? only.text.slice(1, -1) : only.text };
  }
  const answer = await session.query(`SELECT ${text}`, signal);
  if (answer.type !== 'table') return asError(answer) ?? { value: null };
  const cell = answer.data[0]?.[0] ?? null;
  return {
    value:
      typeof cell === 'number' || typeof cell === 'string' || cell === null ? cell : JSON.stringify(cell),
  };
};

const set = async (
  session: Session,
  s: Extract<Statement, { kind: 'set' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  for (const { text, assignment } of s.assignments) {
    // The engine has its say on each assignment (it refuses its own settings), then the session keeps it.
    const verdict = await session.query(`SET ${text}`, signal);
    const refused = asError(verdict);
    if (refused) return refused;
    switch (assignment.kind) {
      case 'names':
        for (const v of ['character_set_client', 'character_set_connection', 'character_set_results'])
          session.variables.set(v, assignment.charset);
        session.variables.set('collation_connection', assignment.collation);
        break;
      case 'system':
      case 'user': {
        const value = await valueOfText(session, assignment.valueText, signal);
        if ('type' in value) return value;
        if (assignment.kind === 'system') session.variables.set(assignment.name, value.value);
        else session.userVariables.set(assignment.name, value.value ?? null);
        break;
      }
      case 'other':
        break;
      default: {
        const _exhaustive: never = assignment;
        return _exhaustive;
      }
    }
  }
  return ok();
};

const connectionSelect = (session: Session, s: Extract<Statement, { kind: 'connectionSelect' }>): Outcome => {
  const row: VariableValue[] = [];
  for (const item of s.items) {
    const known = session.valueOf(item.expression);
    if (!known)
      return fail(
        MysqlError.UnknownSystemVariable,
        `Unknown system variable '${item.name.replace(/^@@(\w+\.)?/, '')}'`,
      );
    row.push(known.value);
  }
  return table(
    s.items.map((i) => i.name),
    row.map((v) => (typeof v === 'number' ? 'BIGINT' : 'VARCHAR')),
    s.noRows ? [] : [row],
  );
};

const showColumns = async (
  session: Session,
  s: Extract<Statement, { kind: 'showColumns' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  const described = await describeTable(session, s.db, s.table, signal);
  if ('type' in described) return described;
  const columns = s.full
    ? ['Field', 'Type', 'Collation', 'Null', 'Key', 'Default', 'Extra', 'Privileges', 'Comment']
    : ['Field', 'Type', 'Null', 'Key', 'Default', 'Extra'];
  let rows: VariableValue[][] = described.names.map((name, i) => {
    const type = mysqlTypeName(described.types[i]!);
    return s.full
      ? [name, type, isText(type) ? 'utf8mb4_general_ci' : null, 'YES', '', null, '', 'select', '']
      : [name, type, 'YES', '', null, ''];
  });
  rows = likeFilter(rows, s.like);
  if (s.where) {
    const filtered = await whereFilter(session, columns, rows, s.where, signal);
    if (!Array.isArray(filtered)) return filtered;
    rows = filtered;
  }
  return textTable(columns, rows);
};

const showCreateTable = async (
  session: Session,
  s: Extract<Statement, { kind: 'showCreateTable' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  const described = await describeTable(session, s.db, s.table, signal);
  if ('type' in described) return described;
  const lines = described.names.map(
    (name, i) => `  ${quoteIdentifier(name)} ${mysqlTypeName(described.types[i]!)} DEFAULT NULL`,
  );
  const ddl = `CREATE TABLE ${quoteIdentifier(s.table)} (\n${lines.join(',\n')}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;
  return textTable(['Table', 'Create Table'], [[s.table, ddl]]);
};

/** The database's name as the engine knows it, or an error naming it. */
const knownDatabase = async (
  session: Session,
  db: string,
  signal?: AbortSignal,
): Promise<string | Outcome> => {
  const answer = await session.query(
    `SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE lower(SCHEMA_NAME) = lower(${quoteString(db)})`,
    signal,
  );
  if (answer.type !== 'table') return asError(answer) ?? fail(MysqlError.Internal, 'no answer');
  const name = answer.data[0]?.[0];
  return typeof name === 'string' ? name : fail(MysqlError.UnknownDatabase, `Unknown database '${db}'`);
};

const showTableStatus = async (
  session: Session,
  s: Extract<Statement, { kind: 'showTableStatus' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  const db = s.db ?? session.database();
  const answer = await session.query(`SHOW FULL TABLES FROM ${quoteIdentifier(db)}`, signal);
  if (answer.type !== 'table') return asError(answer) ?? fail(MysqlError.Internal, 'no answer');
  const columns = [
    'Name',
    'Engine',
    'Version',
    'Row_format',
    'Rows',
    'Avg_row_length',
    'Data_length',
    'Max_data_length',
    'Index_length',
    'Data_free',
    'Auto_increment',
    'Create_time',
    'Update_time',
    'Check_time',
    'Collation',
    'Checksum',
    'Create_options',
    'Comment',
  ];
  let rows: VariableValue[][] = answer.data.map((r) => {
    const view = r[1] === 'VIEW';
    return [
      String(r[0]),
      view ? null : 'InnoDB',
      view ? null : 10,
      view ? null : 'Dynamic',
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      view ? null : 'utf8mb4_general_ci',
      null,
      '',
      view ? 'VIEW' : '',
    ];
  });
  rows = likeFilter(rows, s.like);
  if (s.where) {
    const filtered = await whereFilter(session, columns, rows, s.where, signal);
    if (!Array.isArray(filtered)) return filtered;
    rows = filtered;
  }
  return table(
    columns,
    columns.map((c) => (c === 'Version' ? 'BIGINT' : 'VARCHAR')),
    rows,
  );
};

const INDEX_COLUMNS = [
  'Table',
  'Non_unique',
  'Key_name',
  'Seq_in_index',
  'Column_name',
  'Collation',
  'Cardinality',
  'Sub_part',
  'Packed',
  'Null',
  'Index_type',
  'Comment',
  'Index_comment',
  'Visible',
  'Expression',
];

const PROCESS_COLUMNS = ['Id', 'User', 'Host', 'db', 'Command', 'Time', 'State', 'Info'];

/** The answer to a statement the connection answers itself (`classify` chose it). */
export const answerLocally = async (session: Session, s: Local, signal?: AbortSignal): Promise<Outcome> => {
  switch (s.kind) {
    case 'connectionSelect':
      return connectionSelect(session, s);
    case 'set':
      return set(session, s, signal);
    case 'showVariables': {
      const columns = ['Variable_name', 'Value'];
      let rows: VariableValue[][] = likeFilter(
        session.variables.all().map(([n, v]) => [n, v === null ? '' : String(v)]),
        s.like,
      );
      if (s.where) {
        const filtered = await whereFilter(session, columns, rows, s.where, signal);
        if (!Array.isArray(filtered)) return filtered;
        rows = filtered;
      }
      return textTable(columns, rows);
    }
    case 'showColumns':
      return showColumns(session, s, signal);
    case 'showCreateTable':
      return showCreateTable(session, s, signal);
    case 'showCreateDatabase': {
      const name = await knownDatabase(session, s.db, signal);
      if (typeof name !== 'string') return name;
      return textTable(
        ['Database', 'Create Database'],
        [
          [
            name,
            `CREATE DATABASE ${s.ifNotExists ? '/*!32312 IF NOT EXISTS*/ ' : ''}${quoteIdentifier(name)} /*!40100 DEFAULT CHARACTER SET utf8mb4 */`,
          ],
        ],
      );
    }
    case 'showIndex': {
      // No table here has an index; the table must exist all the same.
      const described = await describeTable(session, s.db, s.table, signal);
      if ('type' in described) return described;
      return textTable(INDEX_COLUMNS, []);
    }
    case 'showTableStatus':
      return showTableStatus(session, s, signal);
    case 'showWarnings': {
      const shown = session.diagnostics.filter((d) => !s.errorsOnly || d.level === 'Error');
      if (s.count)
        return table([`@@session.${s.errorsOnly ? 'error' : 'warning'}_count`], ['BIGINT'], [[shown.length]]);
      return table(
        ['Level', 'Code', 'Message'],
        ['VARCHAR', 'INTEGER', 'VARCHAR'],
        shown.map((d) => [d.level, d.code, d.message]),
      );
    }
    case 'showProcesslist':
      return table(
        PROCESS_COLUMNS,
        ['BIGINT', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'VARCHAR', 'INTEGER', 'VARCHAR', 'VARCHAR'],
        session.options.server
          .processes()
          .map((p) => [
            p.id,
            p.user,
            p.host,
            p.db,
            p.command,
            p.seconds,
            p.command === 'Query' ? 'executing' : '',
            s.full || p.info === null ? p.info : p.info.slice(0, 100),
          ]),
      );
    case 'kill':
      return session.options.server.kill(s.id, s.scope)
        ? ok()
        : fail(MysqlError.NoSuchThread, `Unknown thread id: ${s.id}`);
    case 'transaction':
      // Every statement commits on its own (the tables change only through commands): nothing to begin or end.
      return ok();
    default: {
      const _exhaustive: never = s;
      return _exhaustive;
    }
  }
};
