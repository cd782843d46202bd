import { settled, type AppContext } from '../context';
import type { BudgetRefusal, SpendRequest } from '../llmBudgets/state';
import type { LlmSettings, summarizeLlmSettings } from '../engines/llm';
import type { CallerOfRequest } from '../shared/requestContext';
import { decideLlmCalls, type RecordLlmCall } from './decider';
import { llmQueryAggregate, llmQueryStream } from './state';

/** Where the calls of one batch go, and what they are recorded as. */
export type Target = {
  readonly settings: LlmSettings;
  readonly temperature: number | undefined;
  readonly maxTokens: number | undefined;
  readonly about: {
    readonly project: string | null;
    readonly model: string | null;
    readonly modelVersion: number | null;
    readonly source: 'model' | 'function';
  };
  /** For messages: `LLM model p.m` or `LLM()`. */
  readonly what: string;
};

/**
 * The records of one query's requests, on the query's own stream, and the log position of the
 * last one appended (what the query waits for before it answers).
 */
export const callRecorder = (
  ctx: AppContext,
  queryId: string,
  target: Target,
  summary: ReturnType<typeof summarizeLlmSettings>,
  who: CallerOfRequest,
) => {
  const stream = llmQueryStream(queryId);
  let last: bigint | null = null;
  return {
    record: async (commands: RecordLlmCall[]) => {
      if (commands.length === 0) return;
      const outcome = await ctx.commands.run(stream, llmQueryAggregate, (s) => decideLlmCalls(commands, s));
      last = outcome.lastPosition ?? last;
    },
    /** What a record says of its request: one prompt's hash and size, or the batch's as sent. */
    base: (hash: string, chars: number, rows: readonly number[]) => ({
      queryId,
      ...target.about,
      provider: summary.provider,
      providerModel: summary.model,
      engine: summary.engine ?? null,
      baseUrl: summary.baseUrl,
      promptHash: hash,
      promptChars: chars,
      rows: [...rows],
      ...who,
    }),
    at: () => ctx.clock().toISOString(),
    last: () => last,
  };
};

export type CallRecorder = ReturnType<typeof callRecorder>;

/**
 * A query (or an agent run) refused by an LLM budget before its calls: the limit it would pass, on
 * its stream beside the calls (`llm-query-<query id or trace id>`), in the read model before the
 * caller is answered. The budgets' check records it (src/llmBudgets/service.ts, through its port).
 */
export const recordBudgetRefusal = async (ctx: AppContext, request: SpendRequest, refusal: BudgetRefusal) => {
  const { queryId, what, who } = request;
  const outcome = await ctx.commands.run(llmQueryStream(queryId), llmQueryAggregate, () => [
    {
      type: 'LlmBudgetRefused',
      data: { queryId, ...refusal, what, ...who, refusedAt: ctx.clock().toISOString() },
    },
  ]);
  await settled(ctx, outcome.lastPosition);
};
