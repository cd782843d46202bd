import { z } from 'zod';
import { qualifiedTableName, wellFormedText } from '../shared/resourceSchemas';
import { agentScorings } from '../../events';

/** `EVALUATE AGENT … USING …`'s options: how each answer is scored. */
const scoringOptions = {
  scoring: z
    .enum(agentScorings)
    .optional()
    .describe("'exact' (the default), 'contains', 'numeric', 'sql_result' or 'llm_judge'"),
  tolerance: z
    .number()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .describe('numeric: the largest absolute difference between the expected number and the answer’s first'),
  rubric: wellFormedText(4_000).optional().describe('llm_judge: what the judge grades each answer by'),
  llm: z
    .record(z.string().max(100), z.unknown())
    .optional()
    .describe('llm_judge: the judge’s model (provider, model_name, api_key, base_url); default the server’s'),
};

type ScoringOptions = { scoring?: string; tolerance?: number; rubric?: string; llm?: unknown };

/** An option no scoring reads is refused, not ignored; a judge needs its rubric. */
const scoringRules = (o: ScoringOptions, issues: z.RefinementCtx) => {
  const scoring = o.scoring ?? 'exact';
  if (o.tolerance !== undefined && scoring !== 'numeric')
    issues.addIssue({
      code: 'custom',
      path: ['tolerance'],
      message: "is read by scoring = 'numeric' only",
    });
  if ((o.rubric !== undefined || o.llm !== undefined) && scoring !== 'llm_judge')
    issues.addIssue({
      code: 'custom',
      path: [o.rubric !== undefined ? 'rubric' : 'llm'],
      message: "is read by scoring = 'llm_judge' only",
    });
  if (scoring === 'llm_judge' && o.rubric === undefined)
    issues.addIssue({ code: 'custom', path: ['rubric'], message: "is required by scoring = 'llm_judge'" });
};

/**
 * `EVALUATE AGENT … USING …`: how each answer is scored. A refusal names the option (its path);
 * an option no scoring reads is refused, not ignored.
 */
export const agentEvaluationOptions = z.object(scoringOptions).strict().superRefine(scoringRules);

/**
 * `POST …/agents/{a}/evaluations`'s `evaluation` (beyond MindsDB, which has EVALUATE AGENT in SQL
 * only): the statement's test set (`test_table`, or a SELECT as `query`, run as the caller's own
 * in the agent's project) and its options.
 */
const agentEvaluationRequest = z
  .object({
    test_table: qualifiedTableName
      .optional()
      .describe('The test set: a table (db.table) with question and expected_answer (or expected_sql)'),
    query: wellFormedText(100_000)
      .optional()
      .describe('The test set as a SELECT (in the agent’s project), instead of test_table'),
    ...scoringOptions,
  })
  .strict()
  .superRefine((o, issues) => {
    if ((o.test_table === undefined) === (o.query === undefined))
      issues.addIssue({
        code: 'custom',
        path: [o.test_table === undefined ? 'test_table' : 'query'],
        message: 'give the test set as test_table or as query, one of the two',
      });
    scoringRules(o, issues);
  });

export const agentEvaluationBody = z.object({ evaluation: agentEvaluationRequest }).strict();

export type AgentEvaluationOptions = z.infer<typeof agentEvaluationOptions>;

export const agentEvaluationsPath = z.object({ project: z.string().min(1), agent: z.string().min(1) });

/** An evaluation's id (its event's position). */
const evaluationId = z
  .string()
  .regex(/^[1-9][0-9]{0,17}$/, 'must be an evaluation id (a positive integer)')
  .transform((s) => BigInt(s));

export const agentEvaluationComparePath = agentEvaluationsPath.extend({
  before: evaluationId,
  after: evaluationId,
});

export const agentEvaluationsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const summary = z.object({
  id: z.number().int(),
  agent: z.string(),
  agent_version: z.number().int().describe('The log position of the agent’s definition evaluated'),
  scoring: z.string(),
  cases: z.number().int(),
  passed: z.number().int(),
  pass_rate: z.number(),
  mean_score: z.number(),
  ms_per_case: z.number(),
  test_set_digest: z.string(),
  created_at: z.string(),
});

export const agentEvaluationView = summary.describe('An evaluation: its summary (EVALUATE AGENT’s row)');

const caseSide = z
  .object({
    answer: z.string(),
    score: z.number(),
    passed: z.boolean(),
    trace_id: z.string().nullable().describe('The case’s run: GET …/runs/{trace_id}/replay replays it'),
    error: z.string().nullable(),
  })
  .nullable();

export const agentEvaluationComparison = z.object({
  before: summary,
  after: summary,
  same_test_set: z.boolean().describe('Both evaluations read the same (question, expected) pairs'),
  cases: z.array(
    z.object({
      case_number: z.number().int(),
      question: z.string(),
      before: caseSide,
      after: caseSide,
      changed: z.boolean().describe('The case passes in one and not the other'),
    }),
  ),
});
