import { quoteMysqlIdent } from '../../../shared/quoting';
import { fail, MysqlError, type Outcome } from '../../outcome';
import { columnOf } from '../../protocol/columns';
import type { SessionView } from '../view';
import { asError } from './filters';

/** A table's columns and DuckDB types, as the engine answers `SELECT * FROM db.t LIMIT 0`. */
export const describeTable = async (
  session: Pick<SessionView, 'query' | 'database'>,
  db: string | undefined,
  table: string,
  signal?: AbortSignal,
): Promise<Outcome | { names: string[]; types: string[] }> => {
  const target = `${quoteMysqlIdent(db ?? session.database())}.${quoteMysqlIdent(table)}`;
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
