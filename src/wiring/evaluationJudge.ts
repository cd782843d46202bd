import type { AppContext } from '../context';
import type { AskJudge } from '../knowledgeBases/evaluationJudge';
import { answerCache } from '../llmCalls/answerCache';
import { askAll } from '../llmCalls/asking';
import { llmClientPool } from '../llmCalls/clients';
import type { LlmCallPorts } from '../llmCalls/settings';

/**
 * An evaluation's judge asked through the LLM calls' own path (`askAll`): its caps
 * (LLM_SQL_MAX_CALLS), concurrency, retries, answer cache and batching, each call recorded with its
 * tokens on an `llm-query-<uuid>` stream (source `function`, no model: the judge is no MindsDB model).
 */
export const evaluationJudge = (ctx: AppContext, ports: LlmCallPorts): AskJudge => {
  const limits = ctx.config.llmSql;
  const asking = {
    ctx,
    limits,
    cache: answerCache(limits.cacheEntries, limits.cacheTtlMs),
    clientFor: llmClientPool(ports),
    spending: ports.spending,
  };
  return ({ settings, prompts, project, what }, signal) =>
    askAll(
      asking,
      {
        settings,
        // MindsDB's reranker asks at temperature 0: a judge that answers the same each time.
        temperature: 0,
        maxTokens: settings.maxTokens,
        about: { project, model: null, modelVersion: null, source: 'function' },
        what,
      },
      prompts,
      prompts.map((_, i) => i + 1),
      signal,
    );
};
