import type { AppContext } from '../../../context';
import { llmModelSpec } from '../../../engines/llm/llmModelSpec';
import { isDomainError } from '../../../shared/errors';
import { SqlError, SqlErrorCode } from '../../errors';
import type { LlmModelAnswers } from '../../pipeline/plan';
import type { SqlPorts } from '../../ports';
import type { LlmFunctionAsk } from '../../../llmCalls/service';

/** Too many calls for one query is a query too large (1153), as an agent asked too many rows is. */
const asSqlError = (error: unknown): unknown =>
  isDomainError(error) && error.kind === 'PayloadTooLarge'
    ? new SqlError(SqlErrorCode.TooLarge, error.detail)
    : error;

/**
 * An LLM model queried as a table (src/llmCalls answers its rows): its columns are its target and
 * the input columns its prompt reads. Asked outside the reader the query holds (the calls are
 * recorded, and waited for in the read model, meanwhile).
 */
export const llmModelAnswers = async (
  ctx: AppContext,
  services: Pick<SqlPorts, 'models' | 'llmCalls'>,
  project: string,
  name: string,
): Promise<LlmModelAnswers | undefined> => {
  const model = await services.models.llmModel(project, name);
  if (!model) return undefined;
  let inputs: readonly string[] = [];
  try {
    inputs = llmModelSpec(model.target, model.options).inputs;
  } catch {
    // A definition the engine refuses now is refused with its reason when asked.
  }
  return {
    columns: [model.target, ...inputs.filter((c) => c !== model.target)],
    rows: (rows, overrides, signal) =>
      ctx.duck
        .detached(() => services.llmCalls.answerModel(model, rows, { overrides, signal }))
        .catch((error: unknown) => {
          throw asSqlError(error);
        }),
  };
};

/** An LLM function's inputs (LLM(), LLM_FILTER, LLM_REDUCE, LLM_RERANK: ./calls.ts) answered on the default model. */
export const llmFunctionAnswers =
  (ctx: AppContext, services: Pick<SqlPorts, 'llmCalls'>) =>
  (asked: LlmFunctionAsk, project: string | null, signal: AbortSignal) =>
    ctx.duck
      .detached(() => services.llmCalls.answerFunction(asked, project, { signal }))
      .catch((error: unknown) => {
        throw asSqlError(error);
      });
