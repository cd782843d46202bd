import { SqlError, SqlErrorCode } from '../../errors';
import { mapConcurrently } from '../../../shared/concurrency';
import type { ComputedRef } from '../face';
import type { Predictions } from '../../pipeline/plan';
import type { Computation } from '../model/predictionTables';

/** How many questions of one query are asked at once, and at most in all (each is a model call or more). */
export type AgentQueryOptions = {
  concurrency: number;
  maxRows: number;
  signal: AbortSignal;
  /** Called when the query turns out to ask an LLM model: its time limit becomes LLM_SQL_TIMEOUT_MS. */
  llmDeadline?: () => void;
};

/** MindsDB's agent table: `answer`, `context`, `trace_id`, and the question asked. */
const AGENT_COLUMNS = ['answer', 'context', 'trace_id', 'question'] as const;

/**
 * An agent answers each row's question (MindsDB answers only the last row of a join and treats the
 * others as history; here every row gets its own run), a few at a time.
 */
export const agentAnswers = (
  predictions: Predictions,
  ref: ComputedRef,
  options: AgentQueryOptions,
): Computation => ({
  columns: AGENT_COLUMNS,
  rows: async (inputs) => {
    if (inputs.length > options.maxRows)
      throw new SqlError(
        SqlErrorCode.TooLarge,
        `Agent ${ref.name} would answer ${inputs.length} rows; a query may ask at most ${options.maxRows} (AGENT_SQL_MAX_ROWS): add a LIMIT`,
      );
    const questions = inputs.map((row, i) => {
      const question = row.question ?? row.content;
      if (question === undefined || question === null || String(question).trim() === '')
        throw new SqlError(
          SqlErrorCode.Invalid,
          inputs.length === 1
            ? `Ask agent ${ref.name} with WHERE question = '…'`
            : `Row ${i + 1} has no question for agent ${ref.name}: the joined rows need a "question" column`,
        );
      return String(question);
    });
    const answers = await mapConcurrently(questions, options.concurrency, async (question) => {
      const a = await predictions.ask(ref.project, ref.name, question, options.signal);
      return {
        answer: a.answer,
        context: a.context.length ? JSON.stringify(a.context) : null,
        trace_id: a.traceId,
        question,
      };
    });
    return answers;
  },
});
