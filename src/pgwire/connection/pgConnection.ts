import type net from 'node:net';
import type tls from 'node:tls';
import { plainAddress } from '../../doorway/address';
import type { ClientOf, EngineRowError, ServerLogger, SqlEngine, StreamAnswer } from '../../doorway/engine';
import { writtenLabels } from '../../shared/sqlLabels';
import { SqlSyntaxError } from '../../shared/sqlTokens';
import type { DoorAuthenticator } from '../../doorway/credentials';
import { PgState, sqlStateOf } from '../errors';
import {
  bindComplete,
  closeComplete,
  commandComplete,
  emptyQueryResponse,
  errorResponse,
  noData,
  noticeResponse,
  parameterDescription,
  parameterStatus,
  parseComplete,
  portalSuspended,
  readyForQuery,
  rowDescription,
  type Report,
} from '../protocol/backend';
import { MalformedMessage, ProtocolViolation, type Bind, type FrontendMessage } from '../protocol/frontend';
import {
  BinaryUnsupported,
  Oid,
  ParamInvalid,
  paramValue,
  pgTypeOf,
  type PgColumnType,
} from '../protocol/types';
import { listCatalog, ListingFailed } from '../catalog/listing';
import {
  CatalogLimitExceeded,
  readsCatalog,
  type Listing,
  type ShadowCatalog,
} from '../catalog/shadowCatalog';
import { answerLocally, type LocalAnswer } from '../session/local';
import {
  commandTag,
  paramName,
  readStatements,
  type ConnectionValues,
  type PgStatement,
} from '../session/pgText';
import type { Settings } from '../session/settings';
import { PgChannel } from './channel';
import { error, StatementError, stoppedReport, type StopReason } from './reports';
import { fieldsOf, writeDataRow } from './rows';
import { startSession } from './startup';
import { TransactionBlock } from './transactionBlock';

/** Output is sent in pieces of about this size while rows are written (waiting when the client reads slower). */
const FLUSH_BYTES = 64 * 1024;

type PgConnectionOptions = {
  engine: SqlEngine;
  auth?: DoorAuthenticator;
  tls?: tls.SecureContext;
  logger: ServerLogger;
  /** Rows a result carries at most (the engine's own limit cuts first when lower). */
  maxRows?: number;
  maxMessageBytes: number;
  handshakeTimeoutMs: number;
  /** What `version()` answers. */
  versionText: string;
  /** The project statements run in when the client names no database. */
  defaultDatabase: string;
  /** Answers psql's and the tools' pg_catalog queries; without it they go to the engine (which has no pg_catalog). */
  catalog?: ShadowCatalog;
  /** A CancelRequest arrived on this connection for another one. */
  cancel(processId: number, secret: number): void;
  /** Called once the client has signed in (its server moves it out of the pre-authentication room). */
  onLoggedIn?: () => void;
  /** Parameters a prepared statement may take (SQL_MAX_PARAMS). */
  maxParams: number;
};

/** A statement as Parse left it (its text is read again at Bind: connection values as they are then). */
type Prepared = { sql: string; statement: PgStatement | undefined; paramTypes: number[] };

/** A statement's answer once it has started: local, or the engine's (rows read as Execute asks). */
type Started =
  | { kind: 'local'; answer: LocalAnswer; sent: number }
  | {
      kind: 'engine';
      answer: Extract<StreamAnswer, { type: 'ok' }>;
    }
  | {
      kind: 'rows';
      columns: { name: string; type: PgColumnType }[];
      /** Rows read and not yet sent. */
      pending: unknown[][];
      iterator: AsyncIterator<unknown[][]> | undefined;
      truncated: () => boolean;
      sent: number;
      done: boolean;
      /** Aborts the engine's reading (DuckDB is interrupted): a cancel while rows are read. */
      controller?: AbortController;
    };

/** An untyped text parameter that reads as a number, as that number (null: none does). */
const numberShaped = (portal: Portal): Record<string, number> | null => {
  const out: Record<string, number> = {};
  for (const name of portal.untyped ?? []) {
    const text = portal.params[name];
    if (typeof text !== 'string' || !/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(text)) continue;
    const n = Number(text);
    if (Number.isFinite(n) && (!Number.isInteger(n) || Number.isSafeInteger(n))) out[name] = n;
  }
  return Object.keys(out).length > 0 ? out : null;
};

type Portal = {
  statement: PgStatement | undefined;
  params: Record<string, unknown>;
  /** Parameters sent as text with no type (oid 0): PostgreSQL types them by where they stand. */
  untyped?: readonly string[];
  resultFormats: number[];
  started?: Started;
  finished?: boolean;
};

/** Queries Describe can wrap in `SELECT * FROM (…) LIMIT 0` to learn their columns without reading. */
const WRAPPABLE = new Set(['SELECT', 'WITH', 'VALUES', 'TABLE', 'FROM']);

/** Statements whose answer is rows: Describe of a prepared statement learns their columns. */
const ROW_STATEMENTS = new Set([
  'SELECT',
  'WITH',
  'VALUES',
  'SHOW',
  'DESCRIBE',
  'DESC',
  'EXPLAIN',
  'TABLE',
  'FROM',
  '(',
]);

/**
 * A message as the connection handles it: what the client sent, or one framed right whose fields
 * could not be read (`MalformedMessage`), answered as PostgreSQL answers it (ERROR 08P01).
 */
type Received = FrontendMessage | { type: 'malformed'; of: string; detail: string };

/** The longest text `lastRead` keeps (a connection holds at most this much for it). */
const LAST_READ_MAX_CHARS = 16 * 1024;

/**
 * One PostgreSQL client: the startup exchange (TLS, authentication, parameters), then its messages
 * one at a time: simple queries, and the extended protocol's Parse/Bind/Describe/Execute/Sync with
 * named statements and portals. Statements go to the engine in its dialect (session/pgText.ts) unless
 * the connection answers them itself (session/local.ts).
 */
export class PgConnection {
  readonly done: Promise<void>;
  private readonly channel: PgChannel;
  private settings: Settings | undefined;
  private user = '';
  private database: string;
  private readonly prepared = new Map<string, Prepared>();
  private readonly portals = new Map<string, Portal>();
  private readonly block = new TransactionBlock();
  /** After an error in the extended protocol, messages are skipped until Sync. */
  private skipping = false;
  private running: AbortController | undefined;
  private busy = false;
  private closingWhenIdle = false;
  /**
   * The last text read that holds no connection value, and its statements: a client repeating one
   * query (node-postgres parses its unnamed statement again for every call) reads it once.
   */
  private lastRead: { sql: string; statements: PgStatement[] } | undefined;

  constructor(
    socket: net.Socket,
    readonly processId: number,
    readonly secret: number,
    private readonly o: PgConnectionOptions,
  ) {
    this.database = o.defaultDatabase;
    this.channel = new PgChannel(socket, o.maxMessageBytes, () => this.stop('gone'));
    this.done = this.serve().catch((err: unknown) => {
      o.logger.warn({ err, connection: processId }, 'PostgreSQL connection failed');
      this.channel.destroy();
    });
  }

  /** The client's address as the MySQL door names it (IPv4 without its IPv6-mapped prefix). */
  get address() {
    return plainAddress(this.channel.remoteAddress);
  }

  /** Interrupts the running statement (CancelRequest, shutdown); its client gets an error. */
  stop(reason: StopReason) {
    this.running?.abort(reason);
  }

  /** Ends the connection once its current statement (if any) has answered; at once when idle. */
  closeWhenIdle() {
    this.closingWhenIdle = true;
    if (!this.busy) void this.terminate(true);
  }

  destroy() {
    this.stop('shutdown');
    this.channel.destroy();
  }

  private async terminate(shutdown: boolean) {
    if (shutdown && !this.channel.closed) {
      errorResponse(this.channel.writer, {
        severity: 'FATAL',
        code: PgState.AdminShutdown,
        message: 'terminating connection due to administrator command',
      });
    }
    await this.channel.end();
  }

  private fatal(code: string, message: string) {
    errorResponse(this.channel.writer, { severity: 'FATAL', code, message });
    return this.channel.end();
  }

  private async serve() {
    const timer = setTimeout(() => this.channel.destroy(), this.o.handshakeTimeoutMs);
    let ready = false;
    try {
      ready = await this.startup();
    } catch (e) {
      // Not PostgreSQL at all (an HTTP probe, a TLS hello sent first): told so, and gone.
      if (!(e instanceof ProtocolViolation)) throw e;
      this.o.logger.debug({ connection: this.processId, reason: e.message }, 'PostgreSQL startup refused');
      await this.fatal(PgState.ProtocolViolation, e.message);
    } finally {
      clearTimeout(timer);
    }
    if (!ready) return;
    try {
      await this.loop();
    } finally {
      // Whichever way the connection ends, the engine's readers held by portals are released.
      await this.closePortals();
    }
  }

  /** The startup exchange (connection/startup.ts); true when the client is logged in. */
  private async startup(): Promise<boolean> {
    const session = await startSession(this.channel, {
      processId: this.processId,
      secret: this.secret,
      address: this.address,
      tls: this.o.tls,
      auth: this.o.auth,
      cancel: this.o.cancel,
    });
    if (!session) return false;
    this.o.onLoggedIn?.();
    this.user = session.user;
    if (session.database) this.database = session.database;
    this.settings = session.settings;
    this.o.logger.debug(
      { connection: this.processId, user: this.user, database: this.database },
      'PostgreSQL client logged in',
    );
    return true;
  }

  // ---- messages -----------------------------------------------------------------------------

  private async loop() {
    for (;;) {
      if (this.closingWhenIdle) return this.terminate(true);
      let message: Received | null;
      try {
        message = await this.channel.next();
      } catch (error) {
        if (error instanceof MalformedMessage)
          message = { type: 'malformed', of: error.messageType, detail: error.message };
        else {
          if (!(error instanceof ProtocolViolation)) throw error;
          await this.fatal(PgState.ProtocolViolation, error.message);
          return;
        }
      }
      if (!message) return;
      if (message.type === 'terminate') return this.channel.end();
      if (message.type === 'unsupported' && !['F', 'd', 'c', 'f'].includes(message.code)) {
        // Not a message of protocol 3.0: the byte stream cannot be trusted past it.
        await this.fatal(
          PgState.ProtocolViolation,
          `invalid frontend message type ${message.code.charCodeAt(0)}`,
        );
        return;
      }
      this.busy = true;
      try {
        await this.handle(message);
      } finally {
        this.busy = false;
      }
      if (this.channel.closed) return;
    }
  }

  private async handle(message: Exclude<Received, { type: 'terminate' }>) {
    const w = this.channel.writer;
    // After an error in the extended protocol everything up to Sync is discarded (Flush still flushes).
    if (this.skipping && message.type !== 'sync' && message.type !== 'flush') return;
    try {
      switch (message.type) {
        case 'query':
          await this.simpleQuery(message.sql);
          return;
        case 'parse':
          this.parse(message.name, message.sql, message.paramTypes);
          return;
        case 'bind':
          await this.bind(message);
          return;
        case 'describe':
          await this.describe(message.target, message.name);
          return;
        case 'execute':
          await this.execute(message.portal, message.maxRows);
          return;
        case 'close':
          if (message.target === 'statement') this.prepared.delete(message.name);
          else await this.closePortal(message.name);
          closeComplete(w);
          return;
        case 'sync':
          this.skipping = false;
          if (this.block.status === 'I') await this.closePortals();
          readyForQuery(w, this.block.status);
          await this.channel.flushed();
          return;
        case 'flush':
          await this.channel.flushed();
          return;
        case 'password':
          throw new StatementError(error(PgState.ProtocolViolation, 'unexpected password message'));
        case 'malformed':
          // Framed right, fields unreadable (a NUL inside a query's text): PostgreSQL's ERROR 08P01,
          // and the session goes on.
          throw new StatementError(error(PgState.ProtocolViolation, message.detail));
        case 'unsupported':
          // COPY's data messages outside a COPY are ignored, as PostgreSQL does.
          if (message.code !== 'F') return;
          // A function call is answered whole: its error, then ReadyForQuery (no Sync follows it).
          errorResponse(w, error(PgState.FeatureNotSupported, 'the function call protocol is not supported'));
          readyForQuery(w, this.block.status);
          await this.channel.flushed();
          return;
        default: {
          const _exhaustive: never = message;
          return _exhaustive;
        }
      }
    } catch (e) {
      const report =
        e instanceof StatementError
          ? e.report
          : ((): Report => {
              // A fault of ours (or input no rule foresaw): the client gets an error, not a cut connection.
              this.o.logger.error({ err: e, connection: this.processId }, 'PostgreSQL message failed');
              return error(PgState.Internal, `internal error: ${(e as Error).message ?? String(e)}`);
            })();
      errorResponse(w, report);
      this.block.failed();
      const simpleQuery = message.type === 'query' || (message.type === 'malformed' && message.of === 'Q');
      this.skipping = !simpleQuery;
      // A simple query always ends with ReadyForQuery (its own errors are answered inside it).
      if (simpleQuery) readyForQuery(w, this.block.status);
      // PostgreSQL sends an error at once: clients waiting on Flush (pipelines) see it.
      await this.channel.flushed();
    }
  }

  /** The values written into statements for this connection. */
  private values(): ConnectionValues {
    return {
      version: this.o.versionText,
      database: this.database,
      schema: this.database,
      user: this.user,
      backendPid: this.processId,
      setting: (name) => this.settings!.get(name),
    };
  }

  private read(sql: string): PgStatement[] {
    if (this.lastRead?.sql === sql) return this.lastRead.statements;
    try {
      const statements = readStatements(sql, this.values());
      if (sql.length <= LAST_READ_MAX_CHARS && !statements.some((s) => s.readsConnection))
        this.lastRead = { sql, statements };
      return statements;
    } catch (e) {
      if (e instanceof SqlSyntaxError)
        throw new StatementError({ ...error(PgState.SyntaxError, e.message), position: e.offset + 1 });
      throw e;
    }
  }

  // ---- simple query ---------------------------------------------------------------------------

  private async simpleQuery(sql: string) {
    const w = this.channel.writer;
    this.skipping = false;
    try {
      const statements = this.read(sql);
      if (!statements.length) emptyQueryResponse(w);
      for (const statement of statements) {
        // A client gone mid-text: the statements after the one it left during do not run.
        if (this.channel.closed) return;
        // The simple protocol carries no parameters: `$1` names none, as PostgreSQL says.
        if (statement.paramCount > 0)
          throw new StatementError(
            error(PgState.UndefinedParameter, `there is no parameter $${statement.paramCount}`),
          );
        const portal: Portal = { statement, params: {}, resultFormats: [] };
        try {
          await this.start(portal, true);
          await this.sendRows(portal, 0, true);
        } finally {
          await this.closeStarted(portal);
        }
      }
    } catch (e) {
      if (!(e instanceof StatementError)) throw e;
      errorResponse(w, e.report);
      this.block.failed();
    }
    readyForQuery(w, this.block.status);
    await this.channel.flushed();
  }

  // ---- extended protocol ------------------------------------------------------------------------

  private parse(name: string, sql: string, paramTypes: number[]) {
    if (name !== '' && this.prepared.has(name))
      throw new StatementError(
        error(PgState.DuplicatePreparedStatement, `prepared statement "${name}" already exists`),
      );
    const statements = this.read(sql);
    if (statements.length > 1)
      throw new StatementError(
        error(PgState.SyntaxError, 'cannot insert multiple commands into a prepared statement'),
      );
    // Refused here, before a Bind carries the values: the highest `$n` or the types declared.
    const params = Math.max(statements[0]?.paramCount ?? 0, paramTypes.length);
    if (params > this.o.maxParams)
      throw new StatementError(
        error(
          PgState.TooManyArguments,
          `prepared statement takes ${params} parameters; SQL_MAX_PARAMS allows ${this.o.maxParams}`,
        ),
      );
    this.prepared.set(name, { sql, statement: statements[0], paramTypes });
    parseComplete(this.channel.writer);
  }

  private preparedStatement(name: string): Prepared {
    const p = this.prepared.get(name);
    if (!p)
      throw new StatementError(
        error(PgState.InvalidStatementName, `prepared statement "${name}" does not exist`),
      );
    return p;
  }

  private async bind(b: Bind) {
    const p = this.preparedStatement(b.statement);
    const needed = Math.max(p.statement?.paramCount ?? 0, p.paramTypes.length);
    if (b.params.length !== needed)
      throw new StatementError(
        error(
          PgState.ProtocolViolation,
          `bind message supplies ${b.params.length} parameters, but prepared statement "${b.statement}" requires ${needed}`,
        ),
      );
    const params: Record<string, unknown> = {};
    const untyped: string[] = [];
    try {
      b.params.forEach((raw, i) => {
        const format = b.paramFormats[i] ?? 0;
        params[paramName(i + 1)] = paramValue(raw, format, p.paramTypes[i] ?? 0);
        if (raw !== null && format === 0 && (p.paramTypes[i] ?? 0) === 0) untyped.push(paramName(i + 1));
      });
    } catch (e) {
      if (e instanceof BinaryUnsupported)
        throw new StatementError(error(PgState.FeatureNotSupported, e.message));
      if (e instanceof ParamInvalid) throw new StatementError(error(e.sqlState, e.message));
      throw e;
    }
    for (const f of b.resultFormats)
      if (f !== 0 && f !== 1)
        throw new StatementError(error(PgState.ProtocolViolation, `unsupported format code: ${f}`));
    if (b.portal !== '' && this.portals.has(b.portal))
      throw new StatementError(error('42P03', `cursor "${b.portal}" already exists`));
    await this.closePortal(b.portal);
    // Read again: `current_setting('x')`, `current_database()` … as they are now, not at Parse.
    const statement = p.statement?.readsConnection ? this.read(p.sql)[0] : p.statement;
    this.portals.set(b.portal, { statement, params, untyped, resultFormats: b.resultFormats });
    bindComplete(this.channel.writer);
  }

  private async describe(target: 'statement' | 'portal', name: string) {
    const w = this.channel.writer;
    if (target === 'portal') {
      const portal = this.portals.get(name);
      if (!portal)
        throw new StatementError(error(PgState.InvalidCursorName, `portal "${name}" does not exist`));
      const started = await this.start(portal, false);
      this.describeStarted(started, portal.resultFormats);
      return;
    }
    const p = this.preparedStatement(name);
    const count = Math.max(p.statement?.paramCount ?? 0, p.paramTypes.length);
    // Parameters without a declared type are taken as text (DuckDB casts them where they are used).
    parameterDescription(
      w,
      Array.from({ length: count }, (_, i) => p.paramTypes[i] || Oid.text),
    );
    if (!p.statement || !ROW_STATEMENTS.has(p.statement.words[0]!)) {
      noData(w);
      return;
    }
    // The columns are known once the statement runs. A query runs wrapped in `LIMIT 0` (DuckDB
    // plans it, reads nothing); what cannot be wrapped (SHOW, the engine's own statements) runs
    // once, read no further than its head. Parameters described as text are given as text ('')
    // so a bare `$2` column is text, as described; should that not run (`WHERE id = $1` cannot
    // compare '' with a number), NULLs.
    const statement = p.statement;
    const wrapped: PgStatement = WRAPPABLE.has(statement.words[0]!)
      ? { ...statement, engineText: `SELECT * FROM (${statement.engineText}) AS __described LIMIT 0` }
      : statement;
    const probeWith = async (probed: PgStatement, text: unknown) => {
      const params = Object.fromEntries(
        Array.from({ length: count }, (_, i) => [paramName(i + 1), p.paramTypes[i] ? null : text]),
      );
      const probe: Portal = { statement: probed, params, resultFormats: [] };
      try {
        return await this.start(probe, false);
      } finally {
        await this.closeStarted(probe);
      }
    };
    const attempts: [PgStatement, unknown][] = [
      [wrapped, ''],
      ...(count > 0 ? ([[wrapped, null]] as [PgStatement, unknown][]) : []),
      ...(wrapped !== statement ? ([[statement, null]] as [PgStatement, unknown][]) : []),
    ];
    let started: Started | undefined;
    let failure: unknown;
    for (const [probed, text] of attempts) {
      try {
        started = await probeWith(probed, text);
        // Wrapped, the query's columns are labelled as `*` labels them: labelled again as the
        // statement itself will be when it runs (src/shared/sqlLabels.ts).
        if (probed === wrapped && wrapped !== statement && started.kind === 'rows') {
          const labels = writtenLabels(
            statement.engineText,
            started.columns.map((c) => c.name),
          );
          started = { ...started, columns: started.columns.map((c, i) => ({ ...c, name: labels[i]! })) };
        }
        break;
      } catch (e) {
        if (!(e instanceof StatementError)) throw e;
        failure ??= e;
      }
    }
    if (!started) throw failure;
    this.describeStarted(started, []);
  }

  private describeStarted(started: Started, formats: number[]) {
    const w = this.channel.writer;
    switch (started.kind) {
      case 'rows':
        rowDescription(w, fieldsOf(started.columns, formats));
        return;
      case 'local':
        if (started.answer.kind === 'rows') rowDescription(w, fieldsOf(started.answer.columns, formats));
        else noData(w);
        return;
      case 'engine':
        noData(w);
        return;
      default: {
        const _exhaustive: never = started;
        return _exhaustive;
      }
    }
  }

  private async execute(name: string, maxRows: number) {
    const portal = this.portals.get(name);
    if (!portal)
      throw new StatementError(error(PgState.InvalidCursorName, `portal "${name}" does not exist`));
    if (portal.finished) {
      commandComplete(
        this.channel.writer,
        commandTag(portal.statement?.words ?? [], 0, portal.started?.kind === 'rows'),
      );
      return;
    }
    await this.start(portal, false);
    await this.sendRows(portal, maxRows, false);
  }

  // ---- running statements ---------------------------------------------------------------------

  /** Starts a portal's statement (once): answered locally, or by the engine up to its first rows. */
  private async start(portal: Portal, simple: boolean): Promise<Started> {
    const statement = portal.statement;
    const first = statement?.words[0];
    // In a failed transaction block only its end is taken (a portal already running stops too).
    this.block.assertOpen(first);
    if (portal.started) return portal.started;
    if (!statement)
      return (portal.started = { kind: 'local', answer: { kind: 'command', tag: '' }, sent: 0 });
    const w = this.channel.writer;
    const local = answerLocally(statement, this.settings!, this.values());
    if (local) {
      if (local.kind === 'error') throw new StatementError(error(local.code, local.message));
      return (portal.started = { kind: 'local', answer: await this.applyLocal(local), sent: 0 });
    }
    if (this.o.catalog && readsCatalog(statement.words))
      return (portal.started = await this.fromCatalog(portal, simple));
    const controller = new AbortController();
    this.running = controller;
    const client = this.client();
    let answer: StreamAnswer;
    try {
      const context = { db: this.database };
      const run = (params: Record<string, unknown>): Promise<StreamAnswer> =>
        this.o.engine.stream
          ? this.o.engine.stream(statement.engineText, context, params, controller.signal, client)
          : this.o.engine
              .execute(statement.engineText, context, params, controller.signal, client)
              .then((a): StreamAnswer =>
                a.type === 'table'
                  ? {
                      ...a,
                      rows: (async function* () {})(),
                      whole: a.data,
                      truncated: () => a.truncated === true,
                    }
                  : a,
              );
      answer = await run(portal.params);
      // PostgreSQL types an untyped parameter by where it stands (`c * $1`: c's type); DuckDB reads
      // the text as a string there, which no arithmetic takes. Refused for that reason alone, the
      // statement runs once more with its number-shaped untyped parameters as numbers.
      const numbers = answer.type === 'error' ? numberShaped(portal) : null;
      if (numbers && answer.type === 'error' && /STRING_LITERAL/.test(answer.error_message))
        answer = await run({ ...portal.params, ...numbers });
    } finally {
      if (this.running === controller) this.running = undefined;
    }
    if (typeof answer.context.db === 'string') this.database = answer.context.db;
    if (controller.signal.aborted) throw new StatementError(stoppedReport(controller.signal.reason));
    if (answer.type === 'error')
      throw new StatementError({
        ...error(sqlStateOf(answer.error_code), answer.error_message),
        detail: `engine error ${answer.error_code} in: ${statement.original.slice(0, 200)}`,
      });
    if (answer.type === 'ok') {
      this.block.changedSomething();
      return (portal.started = { kind: 'engine', answer });
    }
    const columns = answer.column_names.map((name, i) => ({
      name,
      type: pgTypeOf(answer.column_types[i] ?? 'VARCHAR'),
    }));
    if (simple) rowDescription(w, fieldsOf(columns, []));
    return (portal.started = {
      kind: 'rows',
      columns,
      pending: answer.whole ? [...answer.whole] : [],
      iterator: answer.whole ? undefined : answer.rows[Symbol.asyncIterator](),
      truncated: () => answer.truncated(),
      sent: 0,
      done: false,
      controller,
    });
  }

  /**
   * What the engine lists for this client, asked afresh for each catalog query: the engine keeps its
   * answers per read-model version and waits for this process's own writes, so a listing is as
   * current as any query. (A listing kept here for two seconds showed a table created meanwhile,
   * by this connection or another door, only after they had passed.)
   */
  private catalogListing(signal: AbortSignal): Promise<Listing> {
    return listCatalog(this.o.engine, this.database, this.client(), signal);
  }

  private client(): ClientOf {
    return { user: this.user, host: this.address, connectionId: this.processId };
  }

  /** A catalog query, answered over the tables the engine lists for this client (catalog/shadowCatalog.ts). */
  private async fromCatalog(portal: Portal, simple: boolean): Promise<Started> {
    const statement = portal.statement!;
    const controller = new AbortController();
    this.running = controller;
    let answer;
    try {
      const listing = await this.catalogListing(controller.signal);
      const params = Array.from({ length: statement.paramCount }, (_, i) => portal.params[paramName(i + 1)]);
      answer = await this.o.catalog!.answer(
        statement.original,
        params,
        listing,
        this.database,
        controller.signal,
        // One user's catalog queries hold at most all the shadow's processes but one.
        this.user,
      );
    } catch (e) {
      if (controller.signal.aborted) throw new StatementError(stoppedReport(controller.signal.reason));
      if (e instanceof CatalogLimitExceeded)
        throw new StatementError(
          error(e.limit === 'memory' ? PgState.OutOfMemory : PgState.QueryCanceled, e.message),
        );
      if (e instanceof ListingFailed)
        throw new StatementError(
          error(e.engineCode ? sqlStateOf(e.engineCode) : PgState.Internal, e.message),
        );
      throw new StatementError(
        error(
          PgState.FeatureNotSupported,
          `this catalog query is not answered here: ${(e as Error).message}`,
        ),
      );
    } finally {
      if (this.running === controller) this.running = undefined;
    }
    const columns = answer.columnNames.map((name, i) => ({
      name,
      type: pgTypeOf(answer.columnTypes[i] ?? 'VARCHAR'),
    }));
    if (simple) rowDescription(this.channel.writer, fieldsOf(columns, []));
    return {
      kind: 'rows',
      columns,
      pending: answer.rows,
      iterator: undefined,
      truncated: () => false,
      sent: 0,
      done: true,
    };
  }

  /**
   * What a local answer changes on the connection (parameters reported, transaction state,
   * prepared statements); the answer as it is then sent (COMMIT of a failed block says ROLLBACK).
   */
  private async applyLocal(local: LocalAnswer): Promise<LocalAnswer> {
    const w = this.channel.writer;
    switch (local.kind) {
      case 'command':
        for (const [name, value] of local.reported ?? []) parameterStatus(w, name, value);
        return local;
      case 'transaction': {
        const outcome = this.block.apply(local);
        for (const n of outcome.notices) noticeResponse(w, n);
        // The block's end closes its portals, as PostgreSQL's transaction end does.
        if (outcome.ended) await this.closePortals();
        return outcome.tag ? { ...local, tag: outcome.tag } : local;
      }
      case 'discardAll': {
        if (this.block.status !== 'I')
          throw new StatementError(error('25001', 'DISCARD ALL cannot run inside a transaction block'));
        this.prepared.clear();
        await this.closePortals();
        for (const [name, value] of this.settings!.resetAll()) parameterStatus(w, name, value);
        return local;
      }
      case 'deallocate':
        if (local.name === null) this.prepared.clear();
        else if (!this.prepared.delete(local.name))
          throw new StatementError(
            error(PgState.InvalidStatementName, `prepared statement "${local.name}" does not exist`),
          );
        return local;
      case 'rows':
      case 'error':
        return local;
      default: {
        const _exhaustive: never = local;
        return _exhaustive;
      }
    }
  }

  /** Sends a started portal's rows (at most `maxRows` when not 0: then PortalSuspended) and its end. */
  private async sendRows(portal: Portal, maxRows: number, simple: boolean) {
    const started = portal.started!;
    const w = this.channel.writer;
    const words = portal.statement?.words ?? [];
    switch (started.kind) {
      case 'engine':
        portal.finished = true;
        commandComplete(w, commandTag(words, started.answer.affected_rows, false));
        return;
      case 'local': {
        const answer = started.answer;
        if (!portal.statement) {
          portal.finished = true;
          emptyQueryResponse(w);
          return;
        }
        if (answer.kind === 'rows') {
          const fields = fieldsOf(answer.columns, portal.resultFormats);
          if (simple) rowDescription(w, fields);
          for (const row of answer.rows) writeDataRow(w, fields, row);
          portal.finished = true;
          commandComplete(
            w,
            answer.kind === 'rows' && answer.tag === 'SHOW' ? 'SHOW' : `SELECT ${answer.rows.length}`,
          );
          return;
        }
        portal.finished = true;
        commandComplete(w, answer.kind === 'error' ? '' : answer.tag);
        return;
      }
      case 'rows':
        await this.sendTableRows(portal, started, maxRows);
        return;
      default: {
        const _exhaustive: never = started;
        return _exhaustive;
      }
    }
  }

  private async sendTableRows(portal: Portal, started: Extract<Started, { kind: 'rows' }>, maxRows: number) {
    const w = this.channel.writer;
    const fields = fieldsOf(started.columns, portal.resultFormats);
    const limit = this.o.maxRows ?? Number.POSITIVE_INFINITY;
    // The signal the engine reads with: a cancel interrupts DuckDB mid-chunk, not only between chunks.
    const controller = started.controller ?? new AbortController();
    this.running = controller;
    let sentNow = 0;
    let cut = false;
    try {
      for (;;) {
        while (started.pending.length) {
          if (started.sent >= limit) {
            cut = true;
            started.pending = [];
            break;
          }
          if (maxRows > 0 && sentNow >= maxRows) {
            portalSuspended(w);
            return;
          }
          writeDataRow(w, fields, started.pending.shift()!);
          started.sent++;
          sentNow++;
        }
        // A client that stops reading holds the statement here; a cancel still ends the wait.
        if (w.size >= FLUSH_BYTES) await this.channel.flushed(controller.signal);
        if (this.channel.closed) throw new StatementError(stoppedReport('gone'));
        if (controller.signal.aborted) throw new StatementError(stoppedReport(controller.signal.reason));
        if (cut || started.done || !started.iterator) break;
        const next = await started.iterator.next();
        if (controller.signal.aborted) throw new StatementError(stoppedReport(controller.signal.reason));
        if (next.done) {
          started.done = true;
          break;
        }
        started.pending = next.value;
      }
    } catch (e) {
      // The engine's reader is released at once, whatever the portal's fate.
      portal.finished = true;
      await this.closeStarted(portal);
      if (e instanceof StatementError) throw e;
      if (e instanceof BinaryUnsupported)
        throw new StatementError(error(PgState.FeatureNotSupported, e.message));
      // A streamed result that fails part way: the error takes the place of the next row.
      const rowError = e as EngineRowError;
      const code = typeof rowError.error_code === 'number' ? rowError.error_code : 1105;
      throw new StatementError(
        error(sqlStateOf(code), typeof rowError.message === 'string' ? rowError.message : String(e)),
      );
    } finally {
      if (this.running === controller) this.running = undefined;
    }
    if (cut || started.truncated())
      noticeResponse(w, {
        severity: 'WARNING',
        code: '01000',
        message: `the result was cut at ${started.sent} rows (the server's row limit, SQL_ROW_LIMIT, or its answer size limit)`,
      });
    portal.finished = true;
    await this.closeStarted(portal);
    // PostgreSQL counts the rows of this Execute (after a suspension, the rest only).
    commandComplete(w, commandTag(portal.statement?.words ?? [], sentNow, true));
  }

  /** Releases what a started statement holds in the engine (its reader), if it still does. */
  private async closeStarted(portal: Portal) {
    const started = portal.started;
    if (started?.kind !== 'rows' || started.done || !started.iterator) return;
    started.done = true;
    try {
      await started.iterator.return?.();
    } catch {
      // Already failed: nothing is held.
    }
  }

  private async closePortal(name: string) {
    const portal = this.portals.get(name);
    if (!portal) return;
    this.portals.delete(name);
    await this.closeStarted(portal);
  }

  private async closePortals() {
    for (const name of [...this.portals.keys()]) await this.closePortal(name);
  }
}
