import { quoteMysqlIdent, quoteString } from '../../../shared/quoting';
import { catalogColumnsQuery, listedColumns } from '../../../shared/sqlAnswers';
import { fail, MysqlError, table, textTable, type Outcome } from '../../outcome';
import type { Statement } from '../statement';
import type { VariableValue } from '../variables';
import type { SessionView } from '../view';
import { describeTable, mysqlTypeName } from './describe';
import { asError, filtered } from './filters';

type Session = Pick<SessionView, 'query' | 'database'>;

/**
 * A table's columns and DuckDB types as the catalog lists them (information_schema.COLUMNS, the
 * one listing every door reads: src/sql/catalog/catalogListing.ts), in order. What the catalog does not
 * list (an agent, a view whose columns cannot be learnt without predicting) is described by the
 * engine's `SELECT * … LIMIT 0`, which also says why an unknown table is unknown.
 */
const catalogColumns = async (
  session: Session,
  db: string | undefined,
  table: string,
  signal?: AbortSignal,
): Promise<Outcome | { names: string[]; types: string[] }> => {
  const database = db ?? session.database();
  const answer = await session.query(catalogColumnsQuery(database, table, quoteString), signal);
  const listed = answer.type === 'table' ? listedColumns(answer, table) : undefined;
  if (listed) return listed;
  return describeTable(session, db, table, signal);
};

export const showColumns = async (
  session: Session,
  s: Extract<Statement, { kind: 'showColumns' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  const described = await catalogColumns(session, s.db, s.table, signal);
  if ('type' in described) return described;
  const columns = s.full
    ? ['Field', 'Type', 'Collation', 'Null', 'Key', 'Default', 'Extra', 'Privileges', 'Comment']
    : ['Field', 'Type', 'Null', 'Key', 'Default', 'Extra'];
  const all: VariableValue[][] = described.names.map((name, i) => {
    const type = mysqlTypeName(described.types[i]!);
    return s.full
      ? [name, type, type === 'text' ? 'utf8mb4_general_ci' : null, 'YES', '', null, '', 'select', '']
      : [name, type, 'YES', '', null, ''];
  });
  const rows = await filtered(session, columns, all, s, signal);
  return Array.isArray(rows) ? textTable(columns, rows) : rows;
};

export const showCreateTable = async (
  session: Session,
  s: Extract<Statement, { kind: 'showCreateTable' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  const described = await catalogColumns(session, s.db, s.table, signal);
  if ('type' in described) return described;
  const lines = described.names.map(
    (name, i) => `  ${quoteMysqlIdent(name)} ${mysqlTypeName(described.types[i]!)} DEFAULT NULL`,
  );
  const ddl = `CREATE TABLE ${quoteMysqlIdent(s.table)} (\n${lines.join(',\n')}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`;
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

export const showCreateDatabase = async (
  session: Session,
  s: Extract<Statement, { kind: 'showCreateDatabase' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  const name = await knownDatabase(session, s.db, signal);
  if (typeof name !== 'string') return name;
  const ifNotExists = s.ifNotExists ? '/*!32312 IF NOT EXISTS*/ ' : '';
  return textTable(
    ['Database', 'Create Database'],
    [
      [
        name,
        `CREATE DATABASE ${ifNotExists}${quoteMysqlIdent(name)} /*!40100 DEFAULT CHARACTER SET utf8mb4 */`,
      ],
    ],
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

export const showIndex = async (
  session: Session,
  s: Extract<Statement, { kind: 'showIndex' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  // No table here has an index; the table must exist all the same.
  const described = await describeTable(session, s.db, s.table, signal);
  if ('type' in described) return described;
  return textTable(INDEX_COLUMNS, []);
};

const TABLE_STATUS_COLUMNS = [
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

/** A SHOW TABLE STATUS row: a table is InnoDB, a view says VIEW; sizes and times are not known. */
const tableStatusRow = (name: string, view: boolean): VariableValue[] => [
  name,
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

export const showTableStatus = async (
  session: Session,
  s: Extract<Statement, { kind: 'showTableStatus' }>,
  signal?: AbortSignal,
): Promise<Outcome> => {
  const db = s.db ?? session.database();
  const answer = await session.query(`SHOW FULL TABLES FROM ${quoteMysqlIdent(db)}`, signal);
  if (answer.type !== 'table') return asError(answer) ?? fail(MysqlError.Internal, 'no answer');
  const all = answer.data.map((r) => tableStatusRow(String(r[0]), r[1] === 'VIEW'));
  const rows = await filtered(session, TABLE_STATUS_COLUMNS, all, s, signal);
  if (!Array.isArray(rows)) return rows;
  return table(
    TABLE_STATUS_COLUMNS,
    TABLE_STATUS_COLUMNS.map((c) => (c === 'Version' ? 'BIGINT' : 'VARCHAR')),
    rows,
  );
};
