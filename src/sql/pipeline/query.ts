import type { AppContext } from '../../context';
import type { CatalogResolver } from '../catalog/catalog';
import { SqlError, SqlErrorCode } from '../errors';
import { quoteModelVersions, toDuckDbDialect, trimStatement } from '../lexical';
import type { TableAnswer, TableRows } from '../answers';
import type { AnswerCache } from './answerCache';
import { deadlineIn, withinDeadline, type Deadline } from '../deadline';
import type { TablePolicy } from './plan';
import { runSelect, type SelectDeps, type SelectInput, type SelectLimits } from './select';
import { oneChunk, streamCounters, streamSelect } from './selectStream';
import { selectText } from './selectText';
import { withRegisteredRelations, type Registrations } from '../statements/roles';
import { invalid } from '../../shared/errors';

/**
 * Why a SELECT is read. Every SELECT the service reads — a client's answer, whole or streamed,
 * SHOW's and DESCRIBE's own SQL, an agent's SQL tool, the rows a write stores, the rows a model
 * trains on — is read by `read`, and the purpose alone decides how (`PURPOSES`).
 */
type SelectPurpose = 'answer' | 'stream' | 'internal' | 'agentTool' | 'write' | 'training';

type PurposeRule = {
  /**
   * How its text becomes DuckDB's: a client's SELECT (`selectText`: native queries, model versions,
   * joins with models and agents, a closing USING); a tool's (MySQL's dialect, no native queries);
   * or the service's own, already DuckDB's.
   */
  readonly text: 'client' | 'tool' | 'engine';
  /** Which of the answer cache's keys it reads and fills; none is read or filled under a policy. */
  readonly cache: 'sent and rewritten' | 'rewritten' | 'none';
  /**
   * Its bounds: the endpoint's (SQL_ROW_LIMIT, SQL_MAX_ANSWER_BYTES, the statement's deadline); a
   * tool's (its own row cap, SQL_TIMEOUT_MS from now); or every row (TRAIN_ROW_LIMIT, no byte cap,
   * ten times SQL_TIMEOUT_MS), refused past the limit rather than cut.
   */
  readonly bounds: 'answer' | 'tool' | 'every row';
  /** Its table policy: the one its caller passes, or the role's of the request it serves. */
  readonly policy: 'given' | 'caller' | 'given, with the registered relations';
  /** What refuses rows past TRAIN_ROW_LIMIT ('every row' only). */
  readonly refusePast?: (limit: number) => Error;
};

/** The refusal of a training read (or a knowledge base's documents) past TRAIN_ROW_LIMIT, whatever it read from. */
export const tooManyTrainingRows = (limit: number) =>
  invalid(`The training query returned more than ${limit} rows (TRAIN_ROW_LIMIT)`);

/** What each purpose of a SELECT may do: its text, cache, bounds, policy and shape. */
const PURPOSES: { readonly [P in SelectPurpose]: PurposeRule } = {
  answer: { text: 'client', cache: 'sent and rewritten', bounds: 'answer', policy: 'given' },
  stream: { text: 'client', cache: 'sent and rewritten', bounds: 'answer', policy: 'given' },
  internal: { text: 'engine', cache: 'rewritten', bounds: 'answer', policy: 'caller' },
  agentTool: {
    text: 'tool',
    cache: 'none',
    bounds: 'tool',
    policy: 'given, with the registered relations',
  },
  write: {
    text: 'client',
    cache: 'none',
    bounds: 'every row',
    policy: 'caller',
    refusePast: (limit) =>
      new SqlError(SqlErrorCode.TooLarge, `The query returned more than ${limit} rows (TRAIN_ROW_LIMIT)`),
  },
  training: {
    text: 'client',
    cache: 'none',
    bounds: 'every row',
    policy: 'given',
    refusePast: (limit) => tooManyTrainingRows(limit),
  },
};

/** One SELECT to read, for a purpose. */
type ReadRequest = {
  readonly sql: string;
  readonly db: string;
  readonly params?: Record<string, unknown>;
  /** The placeholders of the service's own text (purpose `internal`). */
  readonly placeholders?: string[];
  /** The statement's deadline (`answer`, `stream`, `internal`); the others set their own. */
  readonly deadline?: Deadline;
  readonly signal?: AbortSignal;
  /** The policy the caller passes (purposes whose policy is `given`). */
  readonly policy?: TablePolicy;
  /** An agent tool's row cap. */
  readonly rowLimit?: number;
};

/**
 * Every step after this one is linear in the text, but DuckDB plans some large queries for
 * seconds without heeding an interrupt (a 15,000-term OR: 3 s): the text is capped first.
 */
export const checkQuerySize = (query: string, maxBytes: number) => {
  const bytes = Buffer.byteLength(query, 'utf8');
  if (bytes > maxBytes)
    throw new SqlError(
      SqlErrorCode.TooLarge,
      `The query is ${bytes} bytes; SQL_MAX_QUERY_BYTES allows ${maxBytes}`,
    );
};

/** A query's input as `runSelect` takes it, read at the projections' current version. */
export const selectInput = (
  projections: AppContext['projections'],
  text: Omit<SelectInput, 'params' | 'db' | 'version' | 'dataEpoch'>,
  db: string,
  params: Record<string, unknown> = {},
): SelectInput => ({
  ...text,
  params,
  db,
  version: projections.resourceVersion,
  dataEpoch: () => projections.dataEpoch,
});

type QueryDeps = {
  readonly ctx: Pick<AppContext, 'config' | 'projections'>;
  readonly select: SelectDeps;
  readonly catalog: CatalogResolver;
  readonly limits: SelectLimits;
  readonly cache: AnswerCache;
  /** The request's role's table policy (and project scope). */
  readonly callerPolicy: () => TablePolicy | undefined;
  /** The external databases' registrations, whose relations alone a read-only caller reads. */
  readonly registrations: () => Promise<Registrations>;
};

/** The text a purpose reads, as its rule says: the client's (MySQL dialect), a tool's, or the engine's own. */
const textOf = async (
  catalog: QueryDeps['catalog'],
  rule: PurposeRule,
  request: ReadRequest,
  deadline: Deadline,
) => {
  switch (rule.text) {
    case 'client':
      return selectText(catalog, trimStatement(request.sql), request.db, deadline);
    case 'tool': {
      const converted = toDuckDbDialect(request.sql);
      return { ...converted, sql: quoteModelVersions(converted.sql) };
    }
    case 'engine':
      return { sql: request.sql, placeholders: request.placeholders ?? [] };
  }
};

/** The query object: `read(purpose, request)` for every SELECT the service reads. */
export const queryReader = (deps: QueryDeps) => {
  const { ctx, limits, cache } = deps;

  const boundsOf = (rule: PurposeRule, request: ReadRequest): SelectLimits & { deadline: Deadline } => {
    switch (rule.bounds) {
      case 'answer':
        return { ...limits, deadline: request.deadline ?? deadlineIn(ctx.config.sqlTimeoutMs) };
      case 'tool':
        return {
          ...limits,
          rowLimit: request.rowLimit ?? limits.rowLimit,
          deadline: deadlineIn(ctx.config.sqlTimeoutMs),
        };
      case 'every row': {
        const timeoutMs = ctx.config.sqlTimeoutMs * 10;
        return {
          ...limits,
          rowLimit: ctx.config.trainRowLimit,
          maxAnswerBytes: Number.POSITIVE_INFINITY,
          timeoutMs,
          deadline: deadlineIn(timeoutMs),
        };
      }
    }
  };

  const policyOf = async (rule: PurposeRule, request: ReadRequest) => {
    switch (rule.policy) {
      case 'given':
        return request.policy;
      case 'caller':
        return deps.callerPolicy();
      case 'given, with the registered relations':
        return withRegisteredRelations(request.policy, await deps.registrations());
    }
  };

  /** Streamed SELECTs: what they hold now (see `StreamCounters`). */
  const streams = streamCounters();

  /** What reading a SELECT for a purpose starts from: its text, bounds, policy, and a kept answer. */
  const prepare = async (purpose: SelectPurpose, request: ReadRequest) => {
    const rule = PURPOSES[purpose];
    if (rule.bounds !== 'answer') checkQuerySize(request.sql, ctx.config.sqlMaxQueryBytes);
    const bounds = boundsOf(rule, request);
    const policy = await policyOf(rule, request);
    const params = request.params ?? {};
    const cached = policy === undefined && rule.cache !== 'none';
    // The stamps of what the answer reads, taken before it is read: an answer whose tables a batch
    // changed meanwhile is not kept.
    const stamps = cached ? ctx.projections.readStampsNow() : undefined;
    const sentKey =
      cached && rule.cache === 'sent and rewritten'
        ? cache.sentKey(request.sql, request.db, params)
        : undefined;
    const text = await textOf(deps.catalog, rule, request, bounds.deadline);
    const rewrittenKey = cached ? cache.rewrittenKey(request.db, text, params) : undefined;
    const known = cache.knownRewritten(rewrittenKey);
    if (known && stamps) cache.keep(known, stamps, sentKey);
    return {
      rule,
      known,
      input: selectInput(ctx.projections, text, request.db, params),
      options: { ...bounds, signal: request.signal, policy },
      keepRead: (answer: TableAnswer) => stamps && cache.keep(answer, stamps, sentKey, rewrittenKey),
    };
  };

  /** A SELECT read whole, for any purpose but `stream`. */
  const read = async (
    purpose: Exclude<SelectPurpose, 'stream'>,
    request: ReadRequest,
  ): Promise<TableAnswer> => {
    const { rule, known, input, options, keepRead } = await prepare(purpose, request);
    if (known) return known;
    const reading = runSelect(deps.select, input, options);
    const answer = rule.bounds === 'tool' ? await withinDeadline(reading, options.deadline) : await reading;
    keepRead(answer);
    if (answer.truncated && rule.refusePast) throw rule.refusePast(ctx.config.trainRowLimit);
    return answer;
  };

  /** A client's SELECT whose rows come as DuckDB reads them (see `streamSelect`). */
  const stream = async (request: ReadRequest): Promise<TableRows> => {
    const { known, input, options, keepRead } = await prepare('stream', request);
    if (known) return oneChunk(known);
    return streamSelect(deps.select, input, options, streams, keepRead);
  };

  return { read, stream, streams: streams as Readonly<typeof streams> };
};

export type QueryReader = ReturnType<typeof queryReader>;
