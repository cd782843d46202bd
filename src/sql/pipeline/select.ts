import type { DuckDBConnection, DuckDBResult, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import type { Duck, MemoryPressure } from '../../duckdb/database';
import type { CatalogResolver } from '../catalog/catalog';
import { deadlineIn, onExpiry, withinDeadline, type Deadline } from '../deadline';
import { externalError, memoryStopped, SqlError, SqlErrorCode } from '../errors';
import {
  externalAnswer,
  loadIntoDuckDb,
  positional,
  refuseOperatorsReadOtherwise,
  type ExternalFetch,
  type Externals,
} from '../faces/integration/federation';
import type { SelectPredictOptions } from '../faces/model/predictOptions';
import { remoteLimitMs, type ExternalDatabase } from '../../integrations/drivers';
import { duckDbTextForMysql } from '../../integrations/dialects';
import { checkReadOnlyPushdown } from '../faces/integration/pushdownAllowList';
import { bindParameters } from './parameters';
import { prepare, type Prepared, type Predictions, type TablePolicy } from './plan';
import { predictInto } from '../faces/model/predictions';
import { answerPlannedCalls } from '../faces/llm/calls';
import { answerMarkdownCalls } from '../faces/markdown/toMarkdown';
import { materializeSearches } from '../faces/knowledgeBase/knowledgeBaseTables';
import {
  markReusable,
  planOfSameShape,
  readDeterministic,
  streamBound,
  type PreparedCache,
} from './statementCache';
import { literalShape } from './literalShape';
import { readAnswer } from './values';
import { nameTables, planCatalog } from './planCatalog';
import type { TableAnswer } from '../answers';

export type { Predictions } from './plan';
export { preparedCache, type PreparedCache } from './statementCache';

export type SelectLimits = {
  rowLimit: number;
  timeoutMs: number;
  /** Items all list parameters of one query may hold together. */
  maxListItems: number;
  /** Distinct placeholders one query may bind (SQL_MAX_PARAMS); unbounded if absent. */
  maxParams?: number;
  /** Bytes (as UTF-8 JSON) the rows of an answer may take; past them the answer is cut. */
  maxAnswerBytes: number;
  /** The request's deadline, when it started before this query (else `timeoutMs` from now). */
  deadline?: Deadline;
  signal?: AbortSignal;
  /** Only these tables may be read (an agent's SQL tool); caches are bypassed then. */
  policy?: TablePolicy;
  /** Queries that ask an agent: its answers' concurrency, row cap and time limit. */
  agents?: { concurrency: number; maxRows: number; timeoutMs: number };
  /** Queries that ask an LLM model: their time limit (LLM_SQL_TIMEOUT_MS). */
  llm?: { timeoutMs: number };
};

/** What a SELECT reads with: the read model, name resolution, caches, external databases, models. */
export type SelectDeps = {
  duck: Duck;
  catalog: CatalogResolver;
  cache: PreparedCache;
  externals: Externals;
  predictions: Predictions;
  /** The activity tables a local query's DuckDB text reads (src/projection/readVersions.ts). */
  activityTablesRead(sql: string): readonly string[];
};

export type SelectInput = {
  sql: string;
  placeholders: string[];
  /** `?` and `$1` in the client's text (see `toDuckDbDialect`): never bound, refused. */
  positional?: number;
  params: Record<string, unknown>;
  db: string;
  version: number;
  /** The projection runner's data epoch (see `ProjectionRunner.dataEpoch`). */
  dataEpoch: () => number;
  natives?: Map<string, { integration: string; sql: string }>;
  /** A closing `USING k = v` of the SELECT: options of the model's predictions. */
  predictOptions?: SelectPredictOptions | null;
};

/** The DuckDB query a SELECT comes down to, on the reader its caller holds while it reads. */
type LocalRead = {
  c: DuckDBConnection;
  plan: Exclude<Prepared, { kind: 'pushdown' }>;
  sql: string;
  values: Record<string, DuckDBValue>;
  types: Record<string, DuckDBType>;
  /**
   * Whether its answer depends only on the read model's version (a deterministic local query read
   * under no table policy): the SQL service's answer cache may keep it (`markReusable`).
   */
  reusable: boolean;
  /** The activity tables the query reads, for the answer cache's stamp (readVersions.ts). */
  reads: readonly string[];
  /** The plan's names for the result's columns (DuckDB's where it has none). */
  namesOf(columns: string[]): string[];
  /** Settles when the deadline passes or the client leaves (the connection was interrupted). */
  ended: Promise<void>;
  /**
   * Throws once the query is interrupted (deadline, client gone, shutdown). Called after each read
   * too: DuckDB answers an interrupted fetch with an empty chunk, as if the result had ended.
   */
  check(): void;
  /** The error to report for `error` (a deadline, a departed client or a shutdown say so). */
  explain(error: unknown): unknown;
};

type PlanOf<K extends Prepared['kind']> = Extract<Prepared, { kind: K }>;

type RunLimits = SelectLimits & { deadline: Deadline };

/** A query's bound parameters and its database: what LLM()'s first pass reads with. */
type LlmBound = {
  values: Record<string, DuckDBValue>;
  types: Record<string, DuckDBType>;
  db: string;
};

/**
 * A statement on an external database. A caller who may not write has it run read-only, within
 * what is left of the deadline (src/sql/faces/integration/pushdownAllowList.ts). `stopped` ends it
 * when the query stops otherwise (the client left, the server's memory, a shutdown): the driver
 * drops the connection rather than read the rest of the result.
 */
const remote = (
  limits: RunLimits,
  db: ExternalDatabase,
  sql: string,
  params: unknown[] = [],
  stopped?: AbortSignal,
  /** Rows wanted at most (the driver stops one past them), under one read's ceiling. */
  rows?: number,
) => {
  const readOnlyRole = limits.policy?.readOnlyRole;
  // Measured from now, not from the call's start: work before it (planning, other fetches) has
  // used part of the statement's time, and the database's own error must still come first.
  const call = {
    timeoutMs: remoteLimitMs(Math.min(limits.deadline.remaining(), limits.timeoutMs)),
    signal: stopped,
    ...(rows === undefined ? {} : { rows }),
  };
  return readOnlyRole === undefined ? db.query(sql, params, call) : db.readOnlyQuery(sql, params, call);
};

/**
 * The whole query runs in its one external database; only the answer comes back. It runs once the
 * query's reader is given back (see `withSelect`): it needs none, and while a database hangs, every
 * call waiting on it held one of the SQL endpoint's readers (SQL_MAX_CONCURRENT), until every other
 * user's query waited for a reader too.
 */
const pushdown = async (
  externals: Externals,
  limits: RunLimits,
  plan: PlanOf<'pushdown'>,
  values: Record<string, DuckDBValue>,
): Promise<TableAnswer> => {
  // Its connection settings and pool, made on its first use (secrets read from the log): a wait on
  // the integration too, so a time limit reached meanwhile names it.
  const db = await limits.deadline.waitingOn(plan.integration, externals.get(plan.integration));
  // The plan is DuckDB's (PostgreSQL's) dialect: MySQL and MariaDB read its quoted names and
  // string literals their own way.
  const bound = positional(plan.sql, values, db.dialect);
  const mysql = db.dialect.name === 'mysql';
  if (mysql)
    refuseOperatorsReadOtherwise(
      bound.text,
      'duckdb',
      `The query is sent whole to ${plan.integration} (${db.engine})`,
    );
  const text = mysql ? duckDbTextForMysql(bound.text) : bound.text;
  const { params } = bound;
  const readOnlyRole = limits.policy?.readOnlyRole;
  if (readOnlyRole !== undefined) checkReadOnlyPushdown(text, db.engine, plan.integration, readOnlyRole);
  const result = await limits.deadline
    .waitingOn(
      plan.integration,
      // The text as it is, not inside `SELECT * FROM (…) LIMIT n`: MariaDB drops a derived table's
      // ORDER BY (`ORDER BY id` came back in the table's order) and refuses its repeated column
      // names (`SELECT a.id, b.id …`). The driver stops one row past the row limit instead.
      remote(limits, db, text, params, limits.signal, limits.rowLimit),
    )
    .catch((error: unknown) => {
      throw externalError(plan.integration, error);
    });
  const table = externalAnswer(result, limits.rowLimit, limits.maxAnswerBytes);
  return {
    type: 'table',
    column_names: table.column_names,
    column_types: table.column_types,
    data: table.data,
    ...(table.truncated ? { truncated: true as const } : {}),
  };
};

/**
 * One SELECT's run on a pooled reader. It owns the run's interruption — the deadline, a client that
 * goes away, the process's memory past SQL_MAX_PROCESS_MEMORY, a shutdown: each interrupts whatever
 * runs on the connection, repeatedly, since an interrupt reaches only a DuckDB call already running —
 * and its clean-up (the temporary tables and views it made, dropped at `close` whatever happened).
 * One method per plan kind makes what its query reads and answers the text to read.
 */
class QueryRun {
  private interrupted = false;
  private nagging: ReturnType<typeof setInterval> | undefined;
  private overMemory: MemoryPressure | undefined;
  /** Why the run could not take its SQL slot back after waiting outside (see `outside`). */
  private slotLost: unknown;
  /**
   * Agents asked by the query stop with it. Made when first asked for: most queries ask no agent,
   * and making AbortControllers (this one and the door's, per query) was 5.6% of the PostgreSQL
   * door's busy time at 40,000 queries a second.
   */
  private agentsController: AbortController | undefined;
  get stopped(): AbortController {
    if (!this.agentsController) {
      this.agentsController = new AbortController();
      if (this.interrupted) this.agentsController.abort();
    }
    return this.agentsController;
  }
  /** Settles when the run is interrupted (deadline, client gone, memory, shutdown). */
  readonly ended: Promise<void>;
  private end: () => void = () => undefined;
  private readonly temps: string[] = [];
  private readonly views: string[] = [];
  /** What the run set on its connection and clears at `close` (LLM()'s answers). */
  private readonly resets: (() => Promise<void>)[] = [];
  private readonly cancelTimer: () => void;
  private readonly cancelMemoryWatch: () => void;

  constructor(
    private readonly c: DuckDBConnection,
    private readonly deps: Pick<SelectDeps, 'duck' | 'externals' | 'predictions'>,
    private readonly limits: RunLimits,
  ) {
    this.ended = new Promise<void>((resolve) => (this.end = resolve));
    this.cancelTimer = onExpiry(limits.deadline, this.interrupt);
    limits.signal?.addEventListener('abort', this.interrupt);
    this.cancelMemoryWatch = deps.duck.onMemoryPressure((pressure) => {
      this.overMemory = pressure;
      this.interrupt();
    });
  }

  /** A request answered already (deadline passed while it waited for a reader, or the client left) does not start. */
  static refuseStarting(limits: RunLimits) {
    limits.deadline.check();
    if (limits.signal?.aborted)
      throw new SqlError(SqlErrorCode.Interrupted, 'The client went away; the query was interrupted');
  }

  readonly interrupt = () => {
    this.interrupted = true;
    this.agentsController?.abort();
    this.c.interrupt();
    this.nagging ??= setInterval(() => this.c.interrupt(), 100);
    this.end();
  };

  /** The error to report for `error` (a deadline, a departed client, memory or a shutdown say so). */
  readonly explain = (error: unknown): unknown => {
    const { duck } = this.deps;
    if (this.overMemory) return memoryStopped(this.overMemory);
    if (duck.stopping)
      return new SqlError(SqlErrorCode.Interrupted, 'The server is shutting down; the query was interrupted');
    if (this.limits.deadline.expired()) return this.limits.deadline.error();
    if (this.limits.signal?.aborted)
      return new SqlError(SqlErrorCode.Interrupted, 'The client went away; the query was interrupted');
    if (this.slotLost !== undefined) return this.slotLost;
    return error;
  };

  /**
   * Work outside the process the run waits on (an LLM provider, an embeddings provider, a URL, an
   * integration's database): meanwhile its reader gives back its SQL slot and stops counting
   * among the readers others may open (`Duck.waitingOutside`), so a slow provider does not make
   * every other query "busy". The slot is taken again within the deadline; a run that cannot take
   * it is stopped (its caller may have caught the error), answering why, and only `close` (its
   * temporary tables dropped) still runs on the connection.
   */
  private outside<T>(work: () => Promise<T>, what: { rows?: boolean } = {}): Promise<T> {
    return this.deps.duck.waitingOutside(work, {
      ...what,
      withinMs: () => this.limits.deadline.remaining(),
      signal: this.stopped.signal,
      lost: (error) => {
        this.slotLost = error;
        this.interrupt();
      },
    });
  }

  private askingPorts: Predictions | undefined;
  /** The predictions' ports, those that wait outside the process asking through `outside`. */
  private get asking(): Predictions {
    if (this.askingPorts) return this.askingPorts;
    const ports = this.deps.predictions;
    const { llmFunction, llmModel, toMarkdown } = ports;
    this.askingPorts = {
      ...ports,
      ask: (...asked) => this.outside(() => ports.ask(...asked)),
      knowledgeBase: (...asked) => this.outside(() => ports.knowledgeBase(...asked)),
      ...(llmModel && {
        llmModel: async (project, name) => {
          const model = await llmModel(project, name);
          return model && { ...model, rows: (...asked) => this.outside(() => model.rows(...asked)) };
        },
      }),
      ...(llmFunction && { llmFunction: (...asked) => this.outside(() => llmFunction(...asked)) }),
      ...(toMarkdown && {
        toMarkdown: { ...toMarkdown, url: (url, signal) => this.outside(() => toMarkdown.url(url, signal)) },
      }),
    };
    return this.askingPorts;
  }

  /**
   * Throws once the run is interrupted (DuckDB answers an interrupted fetch with an empty chunk).
   * Called between an answer's chunks and every few MiB converted (`holding`: the answer's bytes so
   * far): the heap is looked at then, and stops the run as `Duck.lookAtHeap` says.
   */
  readonly check = (holding = 0) => {
    const heap = this.deps.duck.lookAtHeap(holding);
    if (heap && !this.interrupted) {
      this.overMemory = heap;
      this.interrupt();
    }
    this.limits.deadline.check();
    if (this.interrupted || this.deps.duck.stopping)
      throw this.explain(new SqlError(SqlErrorCode.Interrupted, 'The query was interrupted'));
  };

  /** Stops watching, and drops what the run made (later steps run regardless of an interrupt). */
  async close() {
    this.cancelTimer();
    this.cancelMemoryWatch();
    clearInterval(this.nagging);
    this.limits.signal?.removeEventListener('abort', this.interrupt);
    for (const view of this.views) await this.c.run(`DROP VIEW IF EXISTS ${view}`).catch(() => undefined);
    for (const temp of this.temps) await this.c.run(`DROP TABLE IF EXISTS "${temp}"`).catch(() => undefined);
    for (const reset of this.resets) await reset().catch(() => undefined);
  }

  /** Models' predictions and agents' answers, computed into temporary tables the query reads. */
  async model(
    plan: PlanOf<'model'>,
    predictOptions: SelectPredictOptions | null,
    values: Record<string, DuckDBValue>,
  ): Promise<string> {
    const { limits } = this;
    const agents = limits.agents ?? { concurrency: 4, maxRows: 100, timeoutMs: limits.timeoutMs };
    if (plan.refs.some((r) => r.kind === 'agent')) limits.deadline.extendTo(agents.timeoutMs);
    await this.fetchExternals(plan.fetches);
    return predictInto(
      this.c,
      plan,
      this.asking,
      this.temps,
      {
        concurrency: agents.concurrency,
        maxRows: agents.maxRows,
        signal: this.stopped.signal,
        llmDeadline: () => limits.deadline.extendTo(limits.llm?.timeoutMs ?? agents.timeoutMs),
      },
      predictOptions,
      values,
    );
  }

  /** What a plan that DuckDB reads needs made first, made; answers the text to read. */
  made(
    plan: Exclude<Prepared, { kind: 'pushdown' }>,
    predictOptions: SelectPredictOptions | null,
    bound: LlmBound,
  ): Promise<string> {
    switch (plan.kind) {
      case 'model':
        return this.model(plan, predictOptions, bound.values);
      case 'federated':
        return this.federated(plan, bound);
      case 'local':
        return this.local(plan, bound);
      default: {
        const _exhaustive: never = plan;
        return _exhaustive;
      }
    }
  }

  /** Everything lives in DuckDB: only knowledge bases' searches are made first (and LLM()'s prompts asked). */
  async local(plan: PlanOf<'local'>, bound?: LlmBound): Promise<string> {
    await this.searches(plan.searches, bound?.values);
    await this.markdownCalls(plan.markdown);
    await this.llmCalls(plan.llm, bound);
    return plan.sql;
  }

  /** `TO_MARKDOWN()`: its documents converted first (an LLM() prompt may read one). */
  private async markdownCalls(plan: PlanOf<'local'>['markdown']) {
    if (!plan) return;
    const sources = this.asking.toMarkdown;
    if (!sources) throw new SqlError(SqlErrorCode.Invalid, 'TO_MARKDOWN() is not available on this server');
    const { policy } = this.limits;
    this.resets.push(
      await answerMarkdownCalls(this.c, plan, sources, {
        check: (file) => policy?.check('files', file),
        signal: this.stopped.signal,
      }),
    );
  }

  /**
   * The LLM functions it calls (LLM(), LLM_FILTER, …), in order: each one's inputs read, asked, and
   * the answers set for the query (and the next function's inputs) to read. One budget of calls
   * and one record stream for the whole query.
   */
  private async llmCalls(plans: PlanOf<'local'>['llm'], bound: LlmBound | undefined) {
    if (!plans?.length || !bound) return;
    const { limits } = this;
    const ask = this.asking.llmFunction;
    if (!ask) throw new SqlError(SqlErrorCode.Invalid, 'LLM functions are not available on this server');
    limits.deadline.extendTo(limits.llm?.timeoutMs ?? limits.timeoutMs);
    const budget = { queryId: crypto.randomUUID(), planned: 0 };
    for (const plan of plans)
      this.resets.push(
        await answerPlannedCalls(this.c, plan, bound, (asked) =>
          ask({ ...asked, budget }, bound.db, this.stopped.signal),
        ),
      );
  }

  /** External tables (filtered where possible) copied into DuckDB, which runs the rest. */
  async federated(plan: PlanOf<'federated'>, bound?: LlmBound): Promise<string> {
    await this.searches(plan.searches, bound?.values);
    await this.fetchExternals(plan.fetches);
    for (const made of plan.assemble ?? []) {
      this.temps.push(made.temp);
      await this.c.run(`CREATE OR REPLACE TEMP TABLE "${made.temp}" AS ${made.sql}`);
    }
    await this.markdownCalls(plan.markdown);
    await this.llmCalls(plan.llm, bound);
    return plan.sql;
  }

  private async searches(searches: PlanOf<'local'>['searches'], bindings: LlmBound['values'] = {}) {
    if (searches.length === 0) return;
    const made = await materializeSearches(this.c, searches, this.asking, this.stopped.signal, bindings);
    this.views.push(...made.views);
    this.temps.push(...made.tables);
  }

  /** External tables the query reads, copied into temporary tables on the run's connection. */
  private async fetchExternals(fetches: ExternalFetch[]) {
    const { deadline } = this.limits;
    for (const fetch of fetches) {
      deadline.check();
      const result = await this.outside(
        () => {
          const reading = this.deps.externals.get(fetch.integration).then((db) => {
            const native = typeof fetch.sql === 'string' ? fetch.sql : fetch.sql(db);
            return fetch.read ? fetch.read(db) : remote(this.limits, db, native, [], this.stopped.signal);
          });
          return deadline.waitingOn(fetch.integration, reading).catch((error: unknown) => {
            // A schema listing leaves out a database that is down rather than failing the tool.
            if (fetch.unreachable) return fetch.unreachable;
            throw externalError(fetch.integration, error);
          });
        },
        { rows: true },
      );
      deadline.check();
      this.temps.push(fetch.temp);
      await loadIntoDuckDb(this.c, fetch.temp, result);
    }
  }
}

/**
 * The part of a SELECT before its rows are read: DuckDB parses it, every table reference is
 * resolved to where MindsDB's name lives (projections, files, or external databases), table and
 * scalar functions that reach outside are refused; then a `QueryRun` on a pooled connection makes
 * what its plan reads (predictions, searches, external fetches) and `read` reads the rows. A
 * pushed-down answer goes to `answered` instead, asked for once the reader is given back. Plans
 * are cached (`cache.queries`, per version of the tables their names were resolved from), answers
 * are not: the SQL service keeps those it may reuse, by text (src/sql/service.ts).
 */
export const withSelect = async <T>(
  { duck, catalog, cache, externals, predictions, activityTablesRead }: SelectDeps,
  input: SelectInput,
  limits: RunLimits,
  answered: (answer: TableAnswer) => T,
  read: (local: LocalRead) => Promise<T>,
): Promise<T> => {
  const { deadline } = limits;
  const bound = bindParameters(input.sql, input.placeholders, input.params, limits.maxListItems, {
    maxParams: limits.maxParams,
    positional: input.positional,
  });
  const natives = input.natives ?? new Map();
  /** The activity tables a local plan's text reads: found once per plan (plans are cached). */
  const readsOf = (plan: Prepared, sql: string) => {
    let reads = cache.reads.get(plan);
    if (!reads) cache.reads.set(plan, (reads = activityTablesRead(sql)));
    return reads;
  };
  const predictOptions = input.predictOptions ?? null;
  const key = `${input.db}\u0000${bound.sql}\u0000${JSON.stringify([...natives])}\u0000${JSON.stringify(predictOptions)}`;
  const outcome = await duck.withReader(
    async (c: DuckDBConnection): Promise<Outcome<T>> => {
      QueryRun.refuseStarting(limits);
      // From here the run's interruption covers whatever runs on `c`: parsing (json_serialize_sql),
      // views made for name resolution, loads, the query itself.
      const run = new QueryRun(c, { duck, externals, predictions }, limits);
      try {
        // A query under a table policy is resolved and checked afresh.
        let plan = limits.policy ? undefined : cache.queries.get(key);
        if (!limits.policy) cache.onLookup('statement', plan !== undefined);
        // A text met for the first time may differ from a planned one in whole numbers only.
        const shape = plan || limits.policy || natives.size > 0 ? undefined : literalShape(bound.sql);
        const shapeKey = shape && `${input.db}\u0000${shape}\u0000${JSON.stringify(predictOptions)}`;
        if (shapeKey) plan = planOfSameShape(cache, shapeKey, key, bound.sql);
        if (!plan) {
          // Kept for the versions of the tables its names were resolved from, as they were when
          // each was looked up (src/sql/pipeline/planCatalog.ts). Every plan notes `projects`:
          // dropping the tables moves every version, and a project's views are made by planning.
          const dependencies = cache.dependencies(input.version);
          dependencies.note(nameTables.of('project'));
          plan = await prepare(
            c,
            planCatalog(catalog, dependencies),
            bound.sql,
            input.db,
            natives,
            deadline,
            limits.policy,
          );
          if (plan.kind !== 'model' && !limits.policy)
            cache.queries.set(key, plan, dependencies.reads(), dependencies.stampsThen);
          if (shapeKey && plan.kind === 'local' && plan.renames)
            cache.shapes.set(shapeKey, plan, dependencies.reads(), dependencies.stampsThen);
        }
        deadline.check();
        if (plan.kind === 'pushdown') return { kind: 'pushdown', plan };
        if (predictOptions && plan.kind !== 'model')
          throw new SqlError(
            SqlErrorCode.Invalid,
            `USING ${Object.keys(predictOptions).join(', ')}: prediction options apply to a query of a model, and this query reads none`,
          );
        const sql = await run.made(plan, predictOptions, { ...bound, db: input.db });
        deadline.check();
        const names = plan.names;
        const reusable = !limits.policy && plan.kind === 'local' && plan.deterministic;
        const value = await read({
          c,
          plan,
          sql,
          values: bound.values,
          types: bound.types,
          reusable,
          reads: reusable ? readsOf(plan, sql) : [],
          namesOf: (columns) =>
            columns.map((name, i) => (names?.length === columns.length ? names[i] : undefined) ?? name),
          ended: run.ended,
          check: run.check,
          explain: run.explain,
        });
        return { kind: 'read', value };
      } catch (error) {
        throw run.explain(error);
      } finally {
        await run.close();
      }
    },
    { sql: true },
  );
  if (outcome.kind === 'read') return outcome.value;
  const answer = await pushdown(externals, limits, outcome.plan, bound.values).catch((error: unknown) => {
    throw deadline.expired() ? deadline.error() : error;
  });
  return answered(answer);
};

/** What a SELECT's time on a reader came to: its rows read, or a plan to run in an external database. */
type Outcome<T> = { kind: 'read'; value: T } | { kind: 'pushdown'; plan: PlanOf<'pushdown'> };

/**
 * A streaming result not read to its end (cut at a limit, or its reader stopped) keeps its query's
 * state (a sort's runs, an aggregate's table: up to DuckDB's memory limit) in the connection until
 * the connection's next statement, which is run now.
 */
export const releaseResult = (c: DuckDBConnection): Promise<void> =>
  c.run('SELECT 1').then(
    () => undefined,
    () => undefined,
  );

/**
 * Runs one SELECT whole (see `withSelect`), with a time limit (interrupted) and a row limit (the
 * answer says it was cut). The answer of a deterministic local query is marked reusable
 * (`markReusable`), for the SQL service's answer cache.
 */
export const runSelect = (
  deps: SelectDeps,
  input: SelectInput,
  limits: SelectLimits,
): Promise<TableAnswer> => {
  const deadline = limits.deadline ?? deadlineIn(limits.timeoutMs);
  const work = withSelect(
    deps,
    input,
    { ...limits, deadline },
    (answer) => answer,
    async ({ c, plan, sql, values, types, reusable, reads, namesOf, check }) => {
      // A reused DuckDB statement keeps the sampling seed it was planned with, and external tables
      // and predictions are made afresh each time: only deterministic local queries reuse one.
      const read = (result: DuckDBResult) =>
        readAnswer(result, { rowLimit: limits.rowLimit, maxBytes: limits.maxAnswerBytes, check });
      const table =
        plan.kind === 'local' && plan.deterministic
          ? await readDeterministic(c, sql, values, types, read, input.dataEpoch)
          : await read(await streamBound(c, sql, values, types));
      if (table.truncated) await releaseResult(c);
      const answer: TableAnswer = {
        type: 'table',
        column_names: namesOf(table.column_names),
        column_types: table.column_types,
        data: table.data,
        ...(table.truncated ? { truncated: true as const } : {}),
      };
      if (reusable) markReusable(answer, table.bytes, reads);
      return answer;
    },
  );
  // The answer does not wait past the deadline for work DuckDB does not interrupt at once
  // (planning a large query): that work keeps its connection until it stops.
  return withinDeadline(work, deadline);
};
