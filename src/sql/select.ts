import type { DuckDBConnection, DuckDBResult, DuckDBType, DuckDBValue } from '@duckdb/node-api';
import type { Duck } from '../duckdb/database';
import type { CatalogResolver } from './catalog';
import { deadlineIn, onExpiry, withinDeadline, type Deadline } from './deadline';
import { externalError, SqlError, SqlErrorCode } from './errors';
import {
  doubleQuotesToBackticks,
  externalAnswer,
  loadIntoDuckDb,
  positional,
  type ExternalFetch,
  type Externals,
} from './federation';
import type { SelectPredictOptions } from './predictOptions';
import type { ExternalDatabase } from '../integrations/drivers';
import { checkReadOnlyPushdown } from './pushdownAllowList';
import { bindParameters } from './parameters';
import { prepare, type Prepared, type Predictions, type TablePolicy } from './plan';
import { predictInto } from './predictions';
import { materializeSearches } from './knowledgeBaseTables';
import { keepAnswer, readDeterministic, streamBound, type PreparedCache } from './statementCache';
import { readAnswer } from './values';
import type { TableAnswer } from './answers';

export type { Predictions } from './plan';
export type { TableAnswer } from './answers';
export { isReusableAnswer, preparedCache, type PreparedCache } from './statementCache';

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
};

/** What a SELECT reads with: the read model, name resolution, caches, external databases, models. */
export type SelectDeps = {
  duck: Duck;
  catalog: CatalogResolver;
  cache: PreparedCache;
  externals: Externals;
  predictions: Predictions;
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
export type LocalRead = {
  c: DuckDBConnection;
  plan: Exclude<Prepared, { kind: 'pushdown' }>;
  sql: string;
  values: Record<string, DuckDBValue>;
  types: Record<string, DuckDBType>;
  /** The answer cache's key, for answers that may be reused (deterministic local queries). */
  answerKey: string | null;
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

/**
 * The part of a SELECT before its rows are read: DuckDB parses it, every table reference is
 * resolved to where MindsDB's name lives (projections, files, or external databases), table and
 * scalar functions that reach outside are refused; then, on a pooled connection interrupted at the
 * deadline or when the client leaves, predictions, searches and external fetches fill temporary
 * tables, dropped once `read` is done. A cached or pushed-down answer goes to `answered` instead.
 */
export const withSelect = async <T>(
  { duck, catalog, cache, externals, predictions }: SelectDeps,
  input: SelectInput,
  limits: SelectLimits & { deadline: Deadline },
  answered: (answer: TableAnswer) => T,
  read: (local: LocalRead) => Promise<T>,
): Promise<T> => {
  const { deadline } = limits;
  const bound = bindParameters(input.sql, input.placeholders, input.params, limits.maxListItems, {
    maxParams: limits.maxParams,
    positional: input.positional,
  });
  const natives = input.natives ?? new Map();
  const predictOptions = input.predictOptions ?? null;
  const key = `${input.db}\u0000${bound.sql}\u0000${JSON.stringify([...natives])}\u0000${JSON.stringify(predictOptions)}`;
  const answerKeyOf = (p: Prepared) =>
    p.kind === 'local' && p.deterministic
      ? `${p.sql}\u0000${JSON.stringify(bound.values, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}`
      : null;
  // A cached answer needs no connection at all. A query under a table policy is checked afresh.
  const known = limits.policy ? undefined : cache.queries.get(key);
  if (!limits.policy) cache.onLookup('statement', known !== undefined);
  const knownAnswerKey = known ? answerKeyOf(known) : null;
  const knownAnswer = knownAnswerKey === null ? undefined : cache.answers.get(knownAnswerKey);
  if (knownAnswerKey !== null) cache.onLookup('prepared_answer', knownAnswer !== undefined);
  if (knownAnswer) return answered(knownAnswer);

  return duck.withReader(
    async (c: DuckDBConnection): Promise<T> => {
      // A request answered already (deadline passed while it waited for this connection, or the
      // client left) does not start.
      deadline.check();
      if (limits.signal?.aborted)
        throw new SqlError(SqlErrorCode.Interrupted, 'The client went away; the query was interrupted');
      // From here the deadline, or a client that goes away, interrupts whatever runs on `c`:
      // parsing (json_serialize_sql), views made for name resolution, loads, the query itself.
      // Repeatedly: an interrupt reaches only a DuckDB call already running, and a call can wait
      // for a thread of libuv's pool; later steps (dropping temporary tables) run regardless.
      let nagging: ReturnType<typeof setInterval> | undefined;
      // Agents asked by the query stop with it.
      const stopped = new AbortController();
      let end = () => undefined as void;
      const ended = new Promise<void>((resolve) => (end = resolve));
      let interrupted = false;
      const interrupt = () => {
        interrupted = true;
        stopped.abort();
        c.interrupt();
        nagging ??= setInterval(() => c.interrupt(), 100);
        end();
      };
      const cancelTimer = onExpiry(deadline, interrupt);
      const onAbort = interrupt;
      limits.signal?.addEventListener('abort', onAbort);
      // Past SQL_MAX_PROCESS_MEMORY (memory DuckDB's own limit does not see: valueGuards.ts) the
      // query stops, as at its deadline.
      let overMemory: number | undefined;
      const cancelMemoryWatch = duck.onMemoryPressure((rss) => {
        overMemory = rss;
        interrupt();
      });
      const temps: string[] = [];
      const views: string[] = [];
      const explain = (error: unknown) => {
        if (overMemory !== undefined)
          return new SqlError(
            SqlErrorCode.TooLarge,
            `The query was stopped: the server's memory reached ${mebibytes(overMemory)} MiB, past SQL_MAX_PROCESS_MEMORY (${mebibytes(duck.processMemoryLimit)} MiB)`,
          );
        if (duck.stopping)
          return new SqlError(
            SqlErrorCode.Interrupted,
            'The server is shutting down; the query was interrupted',
          );
        if (deadline.expired()) return deadline.error();
        if (limits.signal?.aborted)
          return new SqlError(SqlErrorCode.Interrupted, 'The client went away; the query was interrupted');
        return error;
      };
      const check = () => {
        deadline.check();
        if (interrupted || duck.stopping)
          throw explain(new SqlError(SqlErrorCode.Interrupted, 'The query was interrupted'));
      };
      try {
        let prepared = limits.policy ? undefined : cache.queries.get(key);
        if (!prepared) {
          prepared = await prepare(c, catalog, bound.sql, input.db, natives, deadline, limits.policy);
          if (prepared.kind !== 'model' && !limits.policy) cache.queries.set(key, prepared, input.version);
        }
        deadline.check();

        const plan: Prepared = prepared;
        // A caller who may not write has external databases run their statements read-only, within
        // what is left of the deadline (src/sql/pushdownAllowList.ts).
        const readOnlyRole = limits.policy?.readOnlyRole;
        const remote = (db: ExternalDatabase, sql: string, params: unknown[] = []) =>
          readOnlyRole === undefined
            ? db.query(sql, params)
            : db.readOnlyQuery(sql, params, Math.min(deadline.remaining(), limits.timeoutMs));
        if (plan.kind === 'pushdown') {
          const db = await externals.get(plan.integration);
          // Our text quotes identifiers with double quotes; MySQL and MariaDB want backticks.
          const dialectText = db.engine === 'postgres' ? plan.sql : doubleQuotesToBackticks(plan.sql);
          const { text, params } = positional(dialectText, bound.values);
          if (readOnlyRole !== undefined)
            checkReadOnlyPushdown(text, db.engine, plan.integration, readOnlyRole);
          const result = await remote(
            db,
            `SELECT * FROM (${text}) AS mindledger_pushed LIMIT ${limits.rowLimit + 1}`,
            params,
          ).catch((error: unknown) => {
            throw externalError(plan.integration, error);
          });
          const table = externalAnswer(result, limits.rowLimit, limits.maxAnswerBytes);
          return answered({
            type: 'table',
            column_names: table.column_names,
            column_types: table.column_types,
            data: table.data,
            ...(table.truncated ? { truncated: true as const } : {}),
          });
        }

        /** External tables the query reads, copied into temporary tables on `c`. */
        const fetchExternals = async (fetches: ExternalFetch[]) => {
          for (const fetch of fetches) {
            deadline.check();
            const result = await externals
              .get(fetch.integration)
              .then((db) => {
                const native = typeof fetch.sql === 'string' ? fetch.sql : fetch.sql((id) => db.quote(id));
                return fetch.read ? fetch.read(db) : remote(db, native);
              })
              .catch((error: unknown) => {
                // A schema listing leaves out a database that is down rather than failing the tool.
                if (fetch.unreachable) return fetch.unreachable;
                throw externalError(fetch.integration, error);
              });
            deadline.check();
            temps.push(fetch.temp);
            await loadIntoDuckDb(c, fetch.temp, result);
          }
        };
        if (predictOptions && plan.kind !== 'model')
          throw new SqlError(
            SqlErrorCode.Invalid,
            `USING ${Object.keys(predictOptions).join(', ')}: prediction options apply to a query of a model, and this query reads none`,
          );
        let sql: string;
        if (plan.kind === 'model') {
          const agents = limits.agents ?? { concurrency: 4, maxRows: 100, timeoutMs: limits.timeoutMs };
          if (plan.refs.some((r) => r.kind === 'agent')) deadline.extendTo(agents.timeoutMs);
          await fetchExternals(plan.fetches);
          sql = await predictInto(
            c,
            plan,
            predictions,
            temps,
            { concurrency: agents.concurrency, maxRows: agents.maxRows, signal: stopped.signal },
            predictOptions,
            bound.values,
          );
        } else sql = plan.sql;
        if (plan.kind !== 'model' && plan.searches.length > 0) {
          const made = await materializeSearches(c, plan.searches, predictions, stopped.signal);
          views.push(...made.views);
          temps.push(...made.tables);
        }
        if (plan.kind === 'federated') {
          await fetchExternals(plan.fetches);
          for (const made of plan.assemble ?? []) {
            temps.push(made.temp);
            await c.run(`CREATE OR REPLACE TEMP TABLE "${made.temp}" AS ${made.sql}`);
          }
        }
        deadline.check();
        const names = plan.names;
        return await read({
          c,
          plan,
          sql,
          values: bound.values,
          types: bound.types,
          answerKey: limits.policy ? null : answerKeyOf(plan),
          namesOf: (columns) =>
            columns.map((name, i) => (names?.length === columns.length ? names[i] : undefined) ?? name),
          ended,
          check,
          explain,
        });
      } catch (error) {
        throw explain(error);
      } finally {
        cancelTimer();
        cancelMemoryWatch();
        clearInterval(nagging);
        limits.signal?.removeEventListener('abort', onAbort);
        for (const view of views) await c.run(`DROP VIEW IF EXISTS ${view}`).catch(() => undefined);
        for (const temp of temps) await c.run(`DROP TABLE IF EXISTS "${temp}"`).catch(() => undefined);
      }
    },
    { sql: true },
  );
};

const mebibytes = (bytes: number) => Math.round(bytes / (1024 * 1024));

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
 * answer says it was cut); small answers of deterministic local queries are cached.
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
    async ({ c, plan, sql, values, types, answerKey, namesOf, check }) => {
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
      if (answerKey !== null) keepAnswer(deps.cache, answerKey, answer, table.bytes, input.version);
      return answer;
    },
  );
  // The answer does not wait past the deadline for work DuckDB does not interrupt at once
  // (planning a large query): that work keeps its connection until it stops.
  return withinDeadline(work, deadline);
};
