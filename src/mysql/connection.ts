import type net from 'node:net';
import { Duplex } from 'node:stream';
import tls from 'node:tls';
import { MysqlError, sqlStateOf, type Outcome, type TableOutcome } from './outcome';
import type { EngineRowError, ServerLogger, SqlEngine } from './port';
import { authenticate, type AuthChannel, type AuthOptions } from './protocol/auth';
import { columnOf, type Column } from './protocol/columns';
import { Capability, Charset, ColumnFlag, ColumnType, Command, ServerStatus } from './protocol/constants';
import { PacketReader, PacketTooLarge, type Packet } from './protocol/packetReader';
import { PacketWriter } from './protocol/packetWriter';
import { MalformedPacket, PayloadReader } from './protocol/payloadReader';
import {
  binaryRow,
  columnDefinition,
  endOfColumns,
  endOfRows,
  eofPacket,
  errPacket,
  greeting,
  isSslRequest,
  okPacket,
  parseHandshakeResponse,
  resultSetHead,
  textRow,
  type Status,
} from './protocol/packets';
import { readParams, type ParamType } from './protocol/params';
import { makeNonce } from './protocol/auth';
import { quoteMysqlIdent } from '../shared/quoting';
import { describeTable } from './session/answers/describe';
import { namePlaceholders, placeholderName, splitStatements } from './session/clientText';
import { Session, type InterruptionReason } from './session/session';
import type { ProcessRow, ServerView } from './session/view';
import type { ServerFacts } from './session/variables';

/** What this server offers; a session uses what both sides offer. */
export const SERVER_CAPABILITIES =
  Capability.LONG_PASSWORD |
  Capability.FOUND_ROWS |
  Capability.LONG_FLAG |
  Capability.CONNECT_WITH_DB |
  Capability.IGNORE_SPACE |
  Capability.PROTOCOL_41 |
  Capability.INTERACTIVE |
  Capability.IGNORE_SIGPIPE |
  Capability.TRANSACTIONS |
  Capability.RESERVED |
  Capability.SECURE_CONNECTION |
  Capability.MULTI_STATEMENTS |
  Capability.MULTI_RESULTS |
  Capability.PS_MULTI_RESULTS |
  Capability.PLUGIN_AUTH |
  Capability.CONNECT_ATTRS |
  Capability.PLUGIN_AUTH_LENENC_CLIENT_DATA |
  Capability.DEPRECATE_EOF;

/** Output is written to the socket in pieces of about this size (and waits when the client reads slower). */
const FLUSH_BYTES = 64 * 1024;
/** Answers this short are written in one go (the common case: no promise, no flush check per row). */
const SMALL_ANSWER_ROWS = 256;

export type ConnectionOptions = {
  engine: SqlEngine;
  facts: ServerFacts;
  defaultDatabase: string;
  server: ServerView;
  logger: ServerLogger;
  tls: tls.SecureContext | undefined;
  auth: AuthOptions;
  /** Rows a result may carry at most (streamed results; the engine cuts its own answers). */
  maxRows: number | undefined;
  /** Largest packet payload a client may send (max_allowed_packet). */
  maxPacketBytes: number;
  /** A client that has not logged in by then is disconnected (MySQL's connect_timeout). */
  handshakeTimeoutMs: number;
};

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

/** A stream that yields `first`, then whatever `socket` sends: a TLS layer over bytes already read. */
const prepended = (socket: net.Socket, first: Buffer): Duplex => {
  const stream = new Duplex({
    read: () => socket.resume(),
    write: (chunk: Buffer, _encoding, callback) => socket.write(chunk, callback),
    final: (callback) => socket.end(callback),
    destroy: (error, callback) => {
      socket.destroy();
      callback(error);
    },
  });
  stream.push(first);
  socket.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) socket.pause();
  });
  socket.on('end', () => stream.push(null));
  socket.on('close', () => stream.destroy());
  socket.on('error', () => undefined);
  return stream;
};

/**
 * One client connection: the handshake (TLS upgrade, authentication), then commands one at a time
 * until the client quits or leaves. A client that leaves mid-statement aborts the statement's
 * signal, which interrupts the engine's work.
 */
export class MysqlConnection {
  private socket: net.Socket | tls.TLSSocket;
  private readonly reader: PacketReader;
  private readonly writer = new PacketWriter();
  private wake: (() => void) | undefined;
  private closed = false;
  private capabilities = 0;
  private multiStatements = true;
  private session: Session | undefined;
  private current: { controller: AbortController; sql: string } | undefined;
  private controller = new AbortController();
  private since = Date.now();
  private readonly statements = new Map<number, PreparedStatement>();
  private nextStatementId = 1;
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
    this.socket = socket;
    this.reader = new PacketReader(o.maxPacketBytes);
    this.host = (socket.remoteAddress ?? 'unknown').replace(/^::ffff:/, '');
    socket.setNoDelay(true);
    this.listen(socket);
    this.done = this.run()
      .catch((err: unknown) => {
        if (!this.closed) o.logger.warn({ err, connection: id }, 'MySQL connection failed');
      })
      .finally(() => this.destroy());
  }

  private readonly onData = (chunk: Buffer) => {
    this.reader.feed(chunk);
    this.wakeUp();
  };
  private readonly onGone = () => {
    this.closed = true;
    this.interrupt('clientGone');
    this.wakeUp();
  };
  private readonly onError = (err: Error) => {
    this.o.logger.debug({ err, connection: this.id }, 'MySQL connection error');
    this.onGone();
  };

  private listen(s: net.Socket | tls.TLSSocket) {
    s.on('data', this.onData);
    s.on('end', this.onGone);
    s.on('close', this.onGone);
    s.on('error', this.onError);
  }

  private unlisten(s: net.Socket | tls.TLSSocket) {
    s.off('data', this.onData);
    s.off('end', this.onGone);
    s.off('close', this.onGone);
    s.off('error', this.onError);
  }

  private wakeUp() {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** The client's next packet; null once it has gone. */
  private async next(): Promise<Packet | null> {
    for (;;) {
      const packet = this.readPacket();
      if (packet) return packet;
      if (this.closed) return null;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** A packet already received, if any. One over max_allowed_packet ends the connection (1153), as in MySQL. */
  private readPacket(): Packet | undefined {
    try {
      return this.reader.read();
    } catch (err) {
      if (!(err instanceof PacketTooLarge)) throw err;
      this.writer.sequence = 0;
      this.error(MysqlError.PacketTooLarge, err.message);
      void this.flush();
      this.socket.end();
      this.closed = true;
      this.interrupt('clientGone');
      return undefined;
    }
  }

  /** Writes what the writer holds; the promise (if any) settles when the client has taken it. */
  private flush(): Promise<void> | undefined {
    if (this.writer.size === 0) return undefined;
    const bytes = this.writer.take();
    if (this.closed) return undefined;
    if (this.socket.write(bytes)) return undefined;
    const socket = this.socket;
    return new Promise((resolve) => {
      const done = () => {
        socket.off('drain', done);
        socket.off('close', done);
        resolve();
      };
      socket.on('drain', done);
      socket.on('close', done);
    });
  }

  private async flushed() {
    const wait = this.flush();
    if (wait) await wait;
  }

  /** The SSL request was the last plain packet: what follows is a TLS handshake, then packets inside TLS. */
  private async upgradeToTls(context: tls.SecureContext) {
    const raw = this.socket;
    this.unlisten(raw);
    const rest = this.reader.takeRest();
    const secure = new tls.TLSSocket(rest.length > 0 ? prepended(raw, rest) : raw, {
      isServer: true,
      secureContext: context,
    });
    this.socket = secure;
    this.listen(secure);
    await new Promise<void>((resolve) => {
      const done = () => {
        secure.off('secure', done);
        secure.off('close', done);
        resolve();
      };
      secure.on('secure', done);
      secure.on('close', done);
    });
  }

  private get deprecateEof() {
    return (this.capabilities & Capability.DEPRECATE_EOF) !== 0;
  }

  private status(more = false): Status {
    return {
      flags: ServerStatus.AUTOCOMMIT | (more ? ServerStatus.MORE_RESULTS_EXISTS : 0),
      warnings: this.session?.warningCount() ?? 0,
    };
  }

  private error(code: number, message: string) {
    errPacket(this.writer, code, sqlStateOf(code), message);
  }

  private async run() {
    const timer = setTimeout(() => this.destroy(), this.o.handshakeTimeoutMs);
    timer.unref();
    try {
      if (!(await this.logIn())) return;
    } finally {
      clearTimeout(timer);
    }
    await this.commands(this.session!);
  }

  /** Greeting, TLS, authentication and the first database; true once the client is in. */
  private async logIn(): Promise<boolean> {
    const nonce = makeNonce();
    const offered = SERVER_CAPABILITIES | (this.o.tls ? Capability.SSL : 0);
    greeting(this.writer, {
      serverVersion: this.o.facts.serverVersion,
      connectionId: this.id,
      nonce,
      capabilities: offered,
      plugin: this.o.auth.defaultPlugin,
    });
    await this.flushed();
    let packet = await this.next();
    if (!packet) return false;
    if (isSslRequest(packet.payload)) {
      if (!this.o.tls) return false;
      await this.upgradeToTls(this.o.tls);
      packet = await this.next();
      if (!packet) return false;
    }
    const response = parseHandshakeResponse(packet.payload);
    this.writer.sequence = packet.sequence + 1;
    this.capabilities = response.capabilities & offered;
    this.multiStatements = (this.capabilities & Capability.MULTI_STATEMENTS) !== 0;
    this.o.logger.debug(
      {
        connection: this.id,
        user: response.user,
        plugin: response.plugin,
        token: response.authResponse.length,
        capabilities: response.capabilities,
        attributes: response.attributes,
        tls: this.socket instanceof tls.TLSSocket,
      },
      'MySQL client connecting',
    );
    const channel: AuthChannel = {
      writer: this.writer,
      secure: this.socket instanceof tls.TLSSocket,
      send: async () => {
        await this.flushed();
        const p = await this.next();
        if (p) this.writer.sequence = p.sequence + 1;
        return p;
      },
    };
    const result = await authenticate(channel, response, nonce, this.host, this.o.auth);
    if (!result.ok) {
      this.error(MysqlError.AccessDenied, result.message);
      await this.flushed();
      return false;
    }
    const session = new Session(this.id, response.user, this.host, {
      engine: this.o.engine,
      facts: this.o.facts,
      server: this.o.server,
      defaultDatabase: this.o.defaultDatabase,
    });
    if (response.database) {
      const use = await session.run(`USE ${quoteMysqlIdent(response.database)}`, {});
      if (use.type === 'error') {
        this.error(use.error_code, use.error_message);
        await this.flushed();
        return false;
      }
    }
    this.session = session;
    okPacket(this.writer, this.status());
    await this.flushed();
    return true;
  }

  private async commands(session: Session) {
    while (!this.closing) {
      const packet = this.readPacket() ?? (await this.next());
      if (!packet) return;
      this.writer.sequence = packet.sequence + 1;
      let keepGoing = true;
      try {
        keepGoing = await this.command(session, packet.payload);
      } catch (err) {
        if (err instanceof MalformedPacket) this.error(MysqlError.UnknownCommand, err.message);
        else {
          this.o.logger.error({ err, connection: this.id }, 'MySQL command failed');
          this.error(MysqlError.Internal, 'Internal error while answering the command');
        }
      }
      const written = this.flush();
      if (written) await written;
      if (!keepGoing) return;
    }
  }

  /** Answers one command; false when the connection should end. */
  private async command(session: Session, payload: Buffer): Promise<boolean> {
    const r = new PayloadReader(payload);
    const command = r.int1();
    switch (command) {
      case Command.QUIT:
        return false;
      case Command.PING:
      case Command.DEBUG:
        okPacket(this.writer, this.status());
        return true;
      case Command.QUERY:
        await this.query(session, r.rest().toString('utf8'));
        return true;
      case Command.INIT_DB:
        await this.runAndWrite(
          session,
          `USE ${quoteMysqlIdent(r.rest().toString('utf8'))}`,
          {},
          false,
          false,
        );
        return true;
      case Command.FIELD_LIST:
        await this.fieldList(session, r.nulBytes().toString('utf8'));
        return true;
      case Command.STATISTICS: {
        const uptime = Math.round(process.uptime());
        const threads = this.o.server.processes().length;
        this.writer
          .begin()
          .string(
            `Uptime: ${uptime}  Threads: ${threads}  Questions: 0  Slow queries: 0  Opens: 0  Open tables: 0`,
          )
          .end();
        return true;
      }
      case Command.PROCESS_INFO:
        await this.query(session, 'SHOW PROCESSLIST');
        return true;
      case Command.PROCESS_KILL: {
        const id = r.int4();
        if (this.o.server.kill(id, 'connection')) okPacket(this.writer, this.status());
        else this.error(MysqlError.NoSuchThread, `Unknown thread id: ${id}`);
        return true;
      }
      case Command.SET_OPTION: {
        // 0: multi-statements on, 1: off.
        this.multiStatements = r.int2() === 0;
        if (this.deprecateEof) okPacket(this.writer, this.status());
        else eofPacket(this.writer, this.status());
        return true;
      }
      case Command.RESET_CONNECTION:
        session.reset();
        this.statements.clear();
        okPacket(this.writer, this.status());
        return true;
      case Command.STMT_PREPARE:
        this.prepare(r.rest().toString('utf8'));
        return true;
      case Command.STMT_EXECUTE:
        await this.execute(session, r);
        return true;
      case Command.STMT_SEND_LONG_DATA: {
        const statement = this.statements.get(r.int4());
        const param = r.int2();
        // No answer, even to an unknown statement (the execution reports it).
        if (statement) {
          const parts = statement.longData.get(param) ?? [];
          parts.push(Buffer.from(r.rest()));
          statement.longData.set(param, parts);
        }
        return true;
      }
      case Command.STMT_CLOSE:
        this.statements.delete(r.int4());
        return true;
      case Command.STMT_RESET: {
        const id = r.int4();
        const statement = this.statements.get(id);
        if (!statement) this.unknownStatement(id, 'mysqld_stmt_reset');
        else {
          statement.longData.clear();
          okPacket(this.writer, this.status());
        }
        return true;
      }
      case Command.STMT_FETCH:
        // Results are sent whole on EXECUTE (no cursor is ever opened), so there is nothing to fetch.
        this.unknownStatement(r.int4(), 'mysqld_stmt_fetch');
        return true;
      default:
        this.error(MysqlError.UnknownCommand, `Unknown command ${command}`);
        return true;
    }
  }

  private unknownStatement(id: number, where: string) {
    this.error(MysqlError.UnknownStatement, `Unknown prepared statement handler (${id}) given to ${where}`);
  }

  /**
   * Makes `sql` the connection's running statement and returns the signal KILL QUERY and a
   * departing client abort. One controller serves statement after statement until one is aborted.
   */
  private begin(sql: string): AbortSignal {
    if (this.controller.signal.aborted) this.controller = new AbortController();
    this.current = { controller: this.controller, sql };
    this.since = Date.now();
    if (this.closed) this.controller.abort('clientGone' satisfies InterruptionReason);
    return this.controller.signal;
  }

  private end() {
    this.current = undefined;
    this.since = Date.now();
  }

  /** Runs `sql` as the running statement and writes its outcome; true when it failed. */
  private async runAndWrite(
    session: Session,
    sql: string,
    params: Record<string, unknown>,
    binary: boolean,
    more: boolean,
  ): Promise<boolean> {
    const signal = this.begin(sql);
    try {
      const outcome = await session.run(sql, params, signal);
      const writing = this.writeOutcome(session, outcome, binary, more, signal);
      if (writing) await writing;
      return outcome.type === 'error';
    } finally {
      this.end();
    }
  }

  private async query(session: Session, text: string) {
    // A text without a semicolon is one statement, whatever the client allows.
    const statements = this.multiStatements && text.includes(';') ? splitStatements(text) : [text];
    if (statements.length === 0) statements.push(text);
    for (let i = 0; i < statements.length; i++) {
      const more = i < statements.length - 1;
      const failed = await this.runAndWrite(session, statements[i]!, {}, false, more);
      if (failed || this.closed) return;
      if (more && this.writer.size >= FLUSH_BYTES) {
        const written = this.flush();
        if (written) await written;
      }
    }
  }

  private prepare(text: string) {
    const named = namePlaceholders(text);
    const id = this.nextStatementId++;
    this.statements.set(id, { sql: named.sql, params: named.count, types: undefined, longData: new Map() });
    // The result's columns are not known before it runs (the engine decides): drivers read them
    // from the execution's result set, as they must for statements whose columns vary.
    this.writer.begin().int1(0).int4(id).int2(0).int2(named.count).int1(0).int2(0).end();
    if (named.count > 0) {
      for (let i = 0; i < named.count; i++) columnDefinition(this.writer, PARAM_DEFINITION);
      endOfColumns(this.writer, this.deprecateEof, this.status());
    }
  }

  private async execute(session: Session, r: PayloadReader) {
    const id = r.int4();
    r.int1(); // cursor flags: no cursor is opened, the result comes whole
    r.int4(); // iteration count, always 1
    const statement = this.statements.get(id);
    if (!statement) {
      this.unknownStatement(id, 'mysqld_stmt_execute');
      return;
    }
    const { values, types } = readParams(r, statement.params, statement.types, statement.longData);
    statement.types = types;
    statement.longData.clear();
    const params: Record<string, unknown> = {};
    values.forEach((v, i) => (params[placeholderName(i)] = v));
    await this.runAndWrite(session, statement.sql, params, true, false);
  }

  private async fieldList(session: Session, table: string) {
    const signal = this.begin(`SHOW COLUMNS FROM ${quoteMysqlIdent(table)}`);
    try {
      const described = await describeTable(session, undefined, table, signal);
      if ('type' in described) {
        if (described.type === 'error') this.error(described.error_code, described.error_message);
        return;
      }
      described.names.forEach((name, i) =>
        columnDefinition(this.writer, columnOf(name, described.types[i] ?? 'VARCHAR'), {
          schema: session.database(),
          table,
          fieldList: true,
        }),
      );
      endOfRows(this.writer, this.deprecateEof, this.status());
    } finally {
      this.end();
    }
  }

  /** Writes a statement's outcome; a promise only while a large result waits for the client. */
  private writeOutcome(
    session: Session,
    outcome: Outcome,
    binary: boolean,
    more: boolean,
    signal?: AbortSignal,
  ): Promise<void> | undefined {
    switch (outcome.type) {
      case 'ok':
        okPacket(this.writer, this.status(more), { affectedRows: outcome.affectedRows, info: outcome.info });
        return undefined;
      case 'error':
        this.error(outcome.error_code, outcome.error_message);
        return undefined;
      case 'table':
        return this.writeTable(session, outcome, binary, more, signal);
      default: {
        const _exhaustive: never = outcome;
        return _exhaustive;
      }
    }
  }

  /**
   * A result set: the columns, then the rows as they come (written out every FLUSH_BYTES, waiting
   * while the client is slower), then its end with the warning count (1 when the result was cut).
   * A small answer in hand is written at once, without a promise.
   */
  private writeTable(
    session: Session,
    outcome: TableOutcome,
    binary: boolean,
    more: boolean,
    signal?: AbortSignal,
  ): Promise<void> | undefined {
    const columns = outcome.column_names.map((name, i) =>
      columnOf(name, outcome.column_types[i] ?? 'VARCHAR'),
    );
    resultSetHead(this.writer, columns, this.deprecateEof, this.status(more));
    const writeRow = binary ? binaryRow : textRow;
    const limit = this.o.maxRows ?? Number.POSITIVE_INFINITY;
    const rows = outcome.rows;
    const finish = (count: number, cut: boolean) => {
      if (cut || outcome.truncated()) session.noteTruncated(count);
      endOfRows(this.writer, this.deprecateEof, this.status(more));
    };
    if (Array.isArray(rows) && rows.length <= SMALL_ANSWER_ROWS) {
      const count = Math.min(rows.length, limit);
      for (let i = 0; i < count; i++) writeRow(this.writer, columns, rows[i]!);
      finish(count, count < rows.length);
      return undefined;
    }
    return (async () => {
      let count = 0;
      let cut = false;
      try {
        if (Array.isArray(rows)) {
          for (const row of rows) {
            if (count >= limit) {
              cut = true;
              break;
            }
            writeRow(this.writer, columns, row);
            count++;
            if (this.writer.size >= FLUSH_BYTES) {
              const written = this.flush();
              if (written) await written;
              if (this.closed) return;
            }
          }
        } else {
          reading: for await (const chunk of rows) {
            for (const row of chunk) {
              if (count >= limit) {
                cut = true;
                break reading;
              }
              writeRow(this.writer, columns, row);
              count++;
            }
            if (this.writer.size >= FLUSH_BYTES) {
              const written = this.flush();
              if (written) await written;
            }
            if (this.closed || signal?.aborted) break;
          }
        }
      } catch (error) {
        // A streamed result that fails part way: the error takes the place of the next row.
        const e = error as EngineRowError;
        const code = typeof e.error_code === 'number' ? e.error_code : MysqlError.Internal;
        this.error(code, typeof e.message === 'string' ? e.message : String(error));
        return;
      }
      finish(count, cut);
    })();
  }

  /** Aborts the running statement's signal (the engine interrupts its query). */
  interrupt(reason: InterruptionReason) {
    if (this.current && !this.current.controller.signal.aborted) this.current.controller.abort(reason);
  }

  get busy() {
    return this.current !== undefined;
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
    this.closed = true;
    this.interrupt('clientGone');
    this.socket.destroy();
    this.wakeUp();
  }
}
