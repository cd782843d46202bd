import { okPacket, columnDefinition, endOfColumns } from '../protocol/packets';
import { Charset, ColumnFlag, ColumnType } from '../protocol/constants';
import type { Column } from '../protocol/columns';
import { readParams, type ParamType } from '../protocol/params';
import type { PayloadReader } from '../protocol/payloadReader';
import { MysqlError } from '../outcome';
import { namePlaceholders, placeholderName } from '../session/clientText';
import { statusOf, type Conversation } from './conversation';

type PreparedStatement = {
  sql: string;
  params: number;
  types: ParamType[] | undefined;
  longData: Map<number, Buffer[]>;
};

const PARAM_DEFINITION: Column = {
  name: '?',
  type: ColumnType.VAR_STRING,
  flags: ColumnFlag.BINARY,
  decimals: 0,
  length: 0,
  charset: Charset.BINARY,
  kind: 'string',
  width: 0,
};

/**
 * A connection's prepared statements (COM_STMT_*): the text with its `?` named for the engine, the
 * parameter types the client sent last, and long data sent ahead of an execution.
 */
export class PreparedStatements {
  private readonly statements = new Map<number, PreparedStatement>();
  private nextId = 1;

  constructor(
    /** `?` a statement may hold (SQL_MAX_PARAMS): more is refused at PREPARE, as MySQL refuses past 65,535. */
    private readonly maxParams: number,
  ) {}

  private unknown(c: Conversation, id: number, where: string) {
    c.channel.error(
      MysqlError.UnknownStatement,
      `Unknown prepared statement handler (${id}) given to ${where}`,
    );
  }

  /** COM_STMT_PREPARE: answers with the statement's id and its parameters. */
  prepare(c: Conversation, text: string) {
    const named = namePlaceholders(text);
    if (named.count > this.maxParams) {
      c.channel.error(
        MysqlError.TooManyPlaceholders,
        `Prepared statement contains too many placeholders: ${named.count}; SQL_MAX_PARAMS allows ${this.maxParams}`,
      );
      return;
    }
    const id = this.nextId++;
    this.statements.set(id, { sql: named.sql, params: named.count, types: undefined, longData: new Map() });
    // The result's columns are not known before it runs (the engine decides): drivers read them
    // from the execution's result set, as they must for statements whose columns vary.
    c.channel.writer.begin().int1(0).int4(id).int2(0).int2(named.count).int1(0).int2(0).end();
    if (named.count > 0) {
      for (let i = 0; i < named.count; i++) columnDefinition(c.channel.writer, PARAM_DEFINITION);
      endOfColumns(c.channel.writer, c.deprecateEof, statusOf(c));
    }
  }

  /** COM_STMT_EXECUTE: the statement and its values by name; undefined (the error written) for an unknown one. */
  bind(c: Conversation, r: PayloadReader): { sql: string; params: Record<string, unknown> } | undefined {
    const id = r.int4();
    r.int1(); // cursor flags: no cursor is opened, the result comes whole
    r.int4(); // iteration count, always 1
    const statement = this.statements.get(id);
    if (!statement) {
      this.unknown(c, id, 'mysqld_stmt_execute');
      return undefined;
    }
    const { values, types } = readParams(r, statement.params, statement.types, statement.longData);
    statement.types = types;
    statement.longData.clear();
    const params: Record<string, unknown> = {};
    values.forEach((v, i) => (params[placeholderName(i)] = v));
    return { sql: statement.sql, params };
  }

  /** COM_STMT_SEND_LONG_DATA: no answer, even to an unknown statement (the execution reports it). */
  appendLongData(r: PayloadReader) {
    const statement = this.statements.get(r.int4());
    const param = r.int2();
    if (!statement) return;
    const parts = statement.longData.get(param) ?? [];
    parts.push(Buffer.from(r.rest()));
    statement.longData.set(param, parts);
  }

  /** COM_STMT_CLOSE: no answer. */
  close(id: number) {
    this.statements.delete(id);
  }

  /** COM_STMT_RESET: forgets the long data sent so far. */
  reset(c: Conversation, id: number) {
    const statement = this.statements.get(id);
    if (!statement) return this.unknown(c, id, 'mysqld_stmt_reset');
    statement.longData.clear();
    okPacket(c.channel.writer, statusOf(c));
  }

  /** COM_STMT_FETCH: results are sent whole on EXECUTE (no cursor is ever opened), so there is nothing to fetch. */
  fetch(c: Conversation, id: number) {
    this.unknown(c, id, 'mysqld_stmt_fetch');
  }

  /** COM_RESET_CONNECTION: every statement goes. */
  clear() {
    this.statements.clear();
  }
}
