import type { RecordedEvent } from '../../events';
import { DIGEST_ROWS, resultDigest } from '../engines/agentLoop';
import type { AppContext } from '../context';
import { notFound } from '../shared/errors';
import { maskSecrets } from '../shared/secrets';
import { toMindsDbTimestamp } from '../shared/time';
import { asOfSql, textCallsLlm, tableRefsOf } from './asOfSql';
import { runStream } from './state';

/** A SELECT's answer as a replay compares it, or why it could not be read. */
type ReplayAnswer =
  | { readonly ok: true; readonly columns: readonly string[]; readonly rows: readonly (readonly unknown[])[] }
  | { readonly ok: false; readonly error: string };

export type ReplayPorts = {
  /** One SELECT, as the caller's own would run (its role's and token's reach), in `database`. */
  readonly select: (database: string, sql: string) => Promise<ReplayAnswer>;
  /**
   * Whether a database holds data only (uploaded files, an external database): a name read there is
   * a table, never a model or an agent, so reading it today calls no model.
   */
  readonly holdsDataOnly: (database: string) => Promise<boolean>;
};

/** A digest of an answer as the SQL tool digested its rows (columns, first rows, their count). */
const digestOf = (answer: Extract<ReplayAnswer, { ok: true }>) => resultDigest(answer.columns, answer.rows);

const cut = (answer: ReplayAnswer): ReplayAnswer =>
  answer.ok ? { ...answer, rows: answer.rows.slice(0, DIGEST_ROWS) } : answer;

const summary = (answer: ReplayAnswer) =>
  answer.ok
    ? { ok: true, rows: answer.rows.length, digest: digestOf(answer) }
    : { ok: false, error: answer.error };

type ToolCalled = Extract<RecordedEvent, { type: 'AgentRunToolCalled' }>;
type TableRefs = ReturnType<typeof tableRefsOf>;

/** Why a step's tables (files, external databases: nothing else gets here) cannot be read as they were. */
const noHistoryReason = (refs: TableRefs, database: string): string =>
  [...new Set(refs.map((r) => (r.database ?? database).toLowerCase()))]
    .map((d) =>
      d === 'files'
        ? 'uploaded files keep no history (a file replaced is the new file only)'
        : `${d} is an external database, whose past this service does not keep`,
    )
    .join('; ');

/** No history to read it as it was: today's answer against the digest the run recorded. */
const againstRecordedDigest = (event: ToolCalled, why: string, now: ReplayAnswer) => {
  const today = summary(now);
  const recorded = event.data.resultDigest;
  if (recorded === undefined)
    return {
      compared: 'not_comparable' as const,
      reason: event.data.ok
        ? `not comparable: recorded before result digests (${why}; the run recorded only a row count, ${event.data.rows ?? 'none'})`
        : `not comparable: the step failed when it ran, and ${why}`,
      as_of: null,
      now: today,
    };
  if (!now.ok)
    return {
      compared: 'not_comparable' as const,
      reason: `not comparable: today's read failed (${now.error}); ${why}`,
      as_of: null,
      now: today,
      recorded_digest: recorded,
    };
  return {
    compared: 'digest' as const,
    reason: `${why}: today's answer is compared with the digest the run recorded`,
    as_of: null,
    now: today,
    recorded_digest: recorded,
    differs: digestOf(now) !== recorded,
  };
};

/** A SQL step read again: as of its position where its tables keep history, else against its digest. */
const compareSql = async (ports: ReplayPorts, toolDatabase: (tool: string) => string, event: ToolCalled) => {
  const sql = event.data.sql!;
  const position = event.meta.position - 1n;
  if (textCallsLlm(sql))
    return { compared: 'not_rerun' as const, reason: 'it calls LLM(): a replay calls no model' };
  let refs: TableRefs;
  try {
    refs = tableRefsOf(sql);
  } catch (error) {
    return { compared: 'not_rerun' as const, reason: `it does not read as SQL: ${(error as Error).message}` };
  }
  const database = toolDatabase(event.data.name);
  const then = refs.length > 0 ? cut(await ports.select(database, asOfSql(sql, position))) : null;
  const asOf = then === null ? null : { position: position.toString(), ...summary(then) };
  // Read today only what cannot be a model or an agent: tables with history (the AS OF read
  // planned, so none of them is one), or tables of files and external databases.
  const dataOnly =
    then?.ok === true ||
    (refs.length > 0 &&
      (await Promise.all(refs.map((r) => ports.holdsDataOnly(r.database ?? database)))).every(Boolean));
  if (!dataOnly)
    return {
      compared: 'not_rerun' as const,
      reason: then?.ok === false ? then.error : 'it reads no table a replay can read without calling a model',
      as_of: asOf,
    };
  const now = cut(await ports.select(database, sql));
  if (then?.ok) {
    const differs = !now.ok || digestOf(then) !== digestOf(now);
    return { compared: 'as_of' as const, as_of: asOf, now: summary(now), differs };
  }
  return againstRecordedDigest(event, noHistoryReason(refs, database), now);
};

/** A tool step as the replay shows it: recorded, and read again where it ran a query. */
const replayedToolStep = async (
  ports: ReplayPorts,
  toolDatabase: (tool: string) => string,
  e: ToolCalled,
) => {
  const base = {
    seq: Number(e.meta.streamPosition),
    step: e.data.step,
    kind: 'tool' as const,
    name: e.data.name,
    tool_kind: e.data.kind,
    arguments: maskSecrets(e.data.arguments, 'arguments'),
    sql: maskSecrets(e.data.sql, 'sql'),
    recorded: { ok: e.data.ok, rows: e.data.rows, error: e.data.error, rejected: e.data.rejected },
  };
  if (e.data.sql !== null && e.data.kind === 'sql_query' && !e.data.rejected)
    return { ...base, replay: await compareSql(ports, toolDatabase, e) };
  return {
    ...base,
    replay: {
      compared: 'not_rerun' as const,
      reason:
        e.data.kind === 'kb_query'
          ? 'knowledge-base searches are not read again (their chunks keep no history)'
          : e.data.rejected
            ? 'the guard refused it: it is never run'
            : 'it ran no query',
    },
  };
};

/** The run's model and tool steps, in order. */
const replayedSteps = async (
  ports: ReplayPorts,
  toolDatabase: (tool: string) => string,
  events: readonly RecordedEvent[],
) => {
  const steps = [];
  for (const e of events) {
    switch (e.type) {
      case 'AgentRunModelCalled':
        steps.push({
          seq: Number(e.meta.streamPosition),
          step: e.data.step,
          kind: 'model' as const,
          name: e.data.model,
          content: e.data.content,
          tool_calls: e.data.toolCalls,
          finish_reason: e.data.finishReason,
        });
        break;
      case 'AgentRunToolCalled':
        steps.push(await replayedToolStep(ports, toolDatabase, e));
        break;
      default:
        break;
    }
  }
  return steps;
};

/**
 * A run replayed from its events: no model is called. Its steps and answer are read back as they
 * were recorded; each SQL the agent ran is read again as of the log position it ran at (the step's
 * event, less one) and as the read model holds it today, and the replay names each step whose
 * answer differs. Tables without history (uploaded files, external databases) cannot be read as
 * they were: today's answer is compared with the digest of the result the step recorded
 * (src/engines/agentLoop/resultDigest.ts); a step recorded without one is `not_comparable`, never
 * unchanged.
 */
export const runReplay =
  (ctx: AppContext, ports: ReplayPorts) =>
  async (
    project: { id: number; name: string },
    agent: { id: bigint; name: string },
    traceId: string,
    /** The database a SQL tool of the agent reads unqualified names in (its skill's), by tool name. */
    toolDatabase: (tool: string) => string,
  ) => {
    const { events } = await ctx.log.readStream(runStream(traceId), 0n);
    const started = events.find((e) => e.type === 'AgentRunStarted');
    if (
      !started ||
      started.type !== 'AgentRunStarted' ||
      started.data.projectId !== project.id ||
      BigInt(started.data.agentId) !== agent.id
    )
      throw notFound(`Agent ${agent.name} has no run ${traceId}`, 'Run not found');
    const steps = await replayedSteps(ports, toolDatabase, events);
    const end = events.find((e) => e.type === 'AgentRunAnswered' || e.type === 'AgentRunFailed');
    const changed = steps.flatMap((s) =>
      'replay' in s && 'differs' in s.replay && s.replay.differs ? [s.seq] : [],
    );
    // A step that could not be compared is never counted as unchanged.
    const notComparable = steps.flatMap((s) =>
      'replay' in s && s.replay.compared === 'not_comparable' ? [s.seq] : [],
    );
    return {
      trace_id: traceId,
      project: project.name,
      agent: agent.name,
      question: started.data.question,
      position: started.meta.position.toString(),
      started_at: toMindsDbTimestamp(started.data.startedAt),
      status:
        end?.type === 'AgentRunAnswered' ? 'answered' : end?.type === 'AgentRunFailed' ? 'failed' : 'running',
      answer: end?.type === 'AgentRunAnswered' ? end.data.answer : null,
      sql: end?.type === 'AgentRunAnswered' ? maskSecrets(end.data.sql, 'sql') : [],
      error: end?.type === 'AgentRunFailed' ? { kind: end.data.kind, message: end.data.message } : null,
      /** A replay never calls the model: every model step is read from the log. */
      model_calls: 0,
      steps,
      changed_steps: changed,
      not_comparable_steps: notComparable,
      unchanged: changed.length === 0 && notComparable.length === 0,
    };
  };
