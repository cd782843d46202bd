import { toMindsDbTimestamp } from '../shared/time';
import type { AgentRunRow, AgentStepRow } from './projection';

const num = (v: bigint | null) => (v === null ? null : Number(v));

/** One run, as `GET …/runs` lists it. */
export const presentRun = (r: AgentRunRow) => ({
  trace_id: r.TRACE_ID,
  project: r.PROJECT,
  agent: r.AGENT,
  question: r.QUESTION,
  answer: r.ANSWER,
  status: r.STATUS,
  error: r.ERROR_KIND === null ? null : { kind: r.ERROR_KIND, message: r.ERROR },
  step_count: r.STEPS,
  provider: r.PROVIDER,
  model: r.MODEL,
  engine: r.ENGINE,
  sql: r.SQL,
  usage:
    r.TOTAL_TOKENS === null
      ? null
      : {
          prompt_tokens: num(r.PROMPT_TOKENS),
          completion_tokens: num(r.COMPLETION_TOKENS),
          total_tokens: num(r.TOTAL_TOKENS),
        },
  ms: num(r.MS),
  thread_id: r.THREAD_ID,
  via: r.VIA,
  started_at: toMindsDbTimestamp(r.STARTED_AT),
  finished_at: r.FINISHED_AT === null ? null : toMindsDbTimestamp(r.FINISHED_AT),
});

/** One model call or tool call of a run. */
export const presentStep = (s: AgentStepRow) => ({
  seq: Number(s.SEQ),
  step: s.STEP,
  kind: s.KIND,
  name: s.NAME,
  ok: s.OK,
  sql: s.SQL,
  rows: num(s.ROW_COUNT),
  error: s.ERROR,
  rejected: s.REJECTED,
  total_tokens: num(s.TOTAL_TOKENS),
  ms: num(s.MS),
  at: toMindsDbTimestamp(s.RECORDED_AT),
  detail: JSON.parse(s.DETAIL) as Record<string, unknown>,
});
