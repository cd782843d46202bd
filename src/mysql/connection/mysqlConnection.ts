import type net from 'node:net';
import { plainAddress } from '../../doorway/address';
import { quoteMysqlIdent } from '../../shared/quoting';
import { MysqlError } from '../outcome';
import { Capability, Command } from '../protocol/constants';
import { eofPacket, okPacket, serverStatus } from '../protocol/packets';
import { MalformedPacket, PayloadReader } from '../protocol/payloadReader';
import { describeTable } from '../session/answers/describe';
import { splitStatements } from '../session/clientText';
import type { InterruptionReason, Session } from '../session/session';
import type { ProcessRow } from '../session/view';
import { ClientChannel } from './clientChannel';
import { statusOf, type Conversation } from './conversation';
import { logIn, type LogInOptions } from './logIn';
import { PreparedStatements } from './preparedStatements';
import { FLUSH_BYTES, writeFieldList, writeOutcome } from './results';

type ConnectionOptions = LogInOptions & {
  /** Rows a result may carry at most (streamed results; the engine cuts its own answers). */
  maxRows: number | undefined;
  /** Largest packet payload a client may send (max_allowed_packet). */
  maxPacketBytes: number;
  /** A client that has not logged in by then is disconnected (MySQL's connect_timeout). */
  handshakeTimeoutMs: number;
  /** Called once the client has signed in (its server moves it out of the pre-authentication room). */
  onLoggedIn?: () => void;
  /** `?` placeholders a prepared statement may hold (SQL_MAX_PARAMS). */
  maxParams: number;
};

/**
 * One client connection: the handshake (TLS upgrade, authentication), then commands one at a time
 * until the client quits or leaves. A client that leaves mid-statement aborts the statement's
 * signal, which interrupts the engine's work.
 */
export class MysqlConnection {
  private readonly channel: ClientChannel;
  private multiStatements = true;
  private session: Session | undefined;
  private current: { controller: AbortController; sql: string } | undefined;
  private controller = new AbortController();
  private since = Date.now();
  private readonly statements: PreparedStatements;
  /** Set by close(): the connection ends after the command it runs now. */
  private closing = false;
  readonly host: string;
  /** Settles when the connection has ended. */
  readonly done: Promise<void>;

  constructor(
    socket: net.Socket,
    readonly id: number,
    private readonly o: ConnectionOptions,
  ) {
    this.host = plainAddress(socket.remoteAddress ?? 'unknown');
    this.statements = new PreparedStatements(o.maxParams);
    socket.setNoDelay(true);
    this.channel = new ClientChannel(socket, o.maxPacketBytes, {
      gone: () => this.interrupt('clientGone'),
      failed: (err) => o.logger.debug({ err, connection: id }, 'MySQL connection error'),
    });
    this.done = this.run()
      .catch((err: unknown) => {
        if (!this.channel.closed) o.logger.warn({ err, connection: id }, 'MySQL connection failed');
      })
      .finally(() => this.destroy());
  }

  private async run() {
    const timer = setTimeout(() => this.destroy(), this.o.handshakeTimeoutMs);
    timer.unref();
    let conversation: Conversation | undefined;
    try {
      conversation = await this.logIn();
    } finally {
      clearTimeout(timer);
    }
    if (conversation) await this.commands(conversation);
  }

  /** The handshake, then the OK that lets the client in; undefined when it is not. */
  private async logIn(): Promise<Conversation | undefined> {
    const client = await logIn(this.channel, this.o, this.id, this.host);
    if (!client) return undefined;
    this.o.onLoggedIn?.();
    this.session = client.session;
    this.multiStatements = (client.capabilities & Capability.MULTI_STATEMENTS) !== 0;
    okPacket(this.channel.writer, serverStatus(client.session.warningCount()));
    await this.channel.flushed();
    return {
      channel: this.channel,
      session: client.session,
      deprecateEof: (client.capabilities & Capability.DEPRECATE_EOF) !== 0,
      maxRows: this.o.maxRows,
    };
  }

  private async commands(c: Conversation) {
    while (!this.closing) {
      const packet = this.channel.readPacket() ?? (await this.channel.next());
      if (!packet) return;
      this.channel.writer.sequence = packet.sequence + 1;
      let keepGoing = true;
      try {
        keepGoing = await this.command(c, packet.payload);
      } catch (err) {
        if (err instanceof MalformedPacket) this.channel.error(MysqlError.UnknownCommand, err.message);
        else {
          this.o.logger.error({ err, connection: this.id }, 'MySQL command failed');
          this.channel.error(MysqlError.Internal, 'Internal error while answering the command');
        }
      }
      await this.channel.flushed();
      if (!keepGoing) return;
    }
  }

  /** Answers one command; false when the connection should end. */
  private async command(c: Conversation, payload: Buffer): Promise<boolean> {
    const r = new PayloadReader(payload);
    const command = r.int1();
    const writer = this.channel.writer;
    switch (command) {
      case Command.QUIT:
        return false;
      case Command.PING:
      case Command.DEBUG:
        okPacket(writer, statusOf(c));
        return true;
      case Command.QUERY:
        await this.query(c, r.rest().toString('utf8'));
        return true;
      case Command.INIT_DB:
        await this.runAndWrite(c, `USE ${quoteMysqlIdent(r.rest().toString('utf8'))}`, {}, false, false);
        return true;
      case Command.FIELD_LIST:
        await this.fieldList(c, r.nulBytes().toString('utf8'));
        return true;
      case Command.STATISTICS: {
        const uptime = Math.round(process.uptime());
        const threads = this.o.server.processes().length;
        writer
          .begin()
          .string(
            `Uptime: ${uptime}  Threads: ${threads}  Questions: 0  Slow queries: 0  Opens: 0  Open tables: 0`,
          )
          .end();
        return true;
      }
      case Command.PROCESS_INFO:
        await this.query(c, 'SHOW PROCESSLIST');
        return true;
      case Command.PROCESS_KILL: {
        const id = r.int4();
        if (this.o.server.kill(id, 'connection')) okPacket(writer, statusOf(c));
        else this.channel.error(MysqlError.NoSuchThread, `Unknown thread id: ${id}`);
        return true;
      }
      case Command.SET_OPTION: {
        // 0: multi-statements on, 1: off.
        this.multiStatements = r.int2() === 0;
        if (c.deprecateEof) okPacket(writer, statusOf(c));
        else eofPacket(writer, statusOf(c));
        return true;
      }
      case Command.RESET_CONNECTION:
        c.session.reset();
        this.statements.clear();
        okPacket(writer, statusOf(c));
        return true;
      case Command.STMT_PREPARE:
        this.statements.prepare(c, r.rest().toString('utf8'));
        return true;
      case Command.STMT_EXECUTE: {
        const bound = this.statements.bind(c, r);
        if (bound) await this.runAndWrite(c, bound.sql, bound.params, true, false);
        return true;
      }
      case Command.STMT_SEND_LONG_DATA:
        this.statements.appendLongData(r);
        return true;
      case Command.STMT_CLOSE:
        this.statements.close(r.int4());
        return true;
      case Command.STMT_RESET:
        this.statements.reset(c, r.int4());
        return true;
      case Command.STMT_FETCH:
        this.statements.fetch(c, r.int4());
        return true;
      default:
        this.channel.error(MysqlError.UnknownCommand, `Unknown command ${command}`);
        return true;
    }
  }

  /**
   * Makes `sql` the connection's running statement and returns the signal KILL QUERY and a
   * departing client abort. One controller serves statement after statement until one is aborted.
   */
  private begin(sql: string): AbortSignal {
    if (this.controller.signal.aborted) this.controller = new AbortController();
    this.current = { controller: this.controller, sql };
    this.since = Date.now();
    if (this.channel.closed) this.controller.abort('clientGone' satisfies InterruptionReason);
    return this.controller.signal;
  }

  private end() {
    this.current = undefined;
    this.since = Date.now();
  }

  /** Runs `sql` as the running statement and writes its outcome; true when it failed. */
  private async runAndWrite(
    c: Conversation,
    sql: string,
    params: Record<string, unknown>,
    binary: boolean,
    more: boolean,
  ): Promise<boolean> {
    const signal = this.begin(sql);
    try {
      const outcome = await c.session.run(sql, params, signal);
      const writing = writeOutcome(c, outcome, { binary, more }, signal);
      if (writing) await writing;
      return outcome.type === 'error';
    } finally {
      this.end();
    }
  }

  private async query(c: Conversation, text: string) {
    // A text without a semicolon is one statement, whatever the client allows.
    const statements = this.multiStatements && text.includes(';') ? splitStatements(text) : [text];
    if (statements.length === 0) statements.push(text);
    for (let i = 0; i < statements.length; i++) {
      const more = i < statements.length - 1;
      const failed = await this.runAndWrite(c, statements[i]!, {}, false, more);
      if (failed || this.channel.closed) return;
      if (more && this.channel.writer.size >= FLUSH_BYTES) {
        await this.channel.flushed();
      }
    }
  }

  private async fieldList(c: Conversation, table: string) {
    const signal = this.begin(`SHOW COLUMNS FROM ${quoteMysqlIdent(table)}`);
    try {
      const described = await describeTable(c.session, undefined, table, signal);
      if (!('type' in described)) writeFieldList(c, table, described);
      else if (described.type === 'error') this.channel.error(described.error_code, described.error_message);
    } finally {
      this.end();
    }
  }

  /** Aborts the running statement's signal (the engine interrupts its query). */
  interrupt(reason: InterruptionReason) {
    if (this.current && !this.current.controller.signal.aborted) this.current.controller.abort(reason);
  }

  processRow(): ProcessRow {
    return {
      id: this.id,
      user: this.session?.user ?? 'unauthenticated user',
      host: this.host,
      db: this.session?.database() ?? null,
      command: this.current ? 'Query' : 'Sleep',
      seconds: Math.floor((Date.now() - this.since) / 1000),
      info: this.current?.sql ?? null,
    };
  }

  /** Ends the connection after the command it runs now (at once when idle). */
  closeWhenIdle() {
    this.closing = true;
    if (!this.current) this.destroy();
  }

  destroy() {
    this.channel.destroy();
  }
}
