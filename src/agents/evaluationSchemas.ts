import { z } from 'zod';
import { wellFormedText } from '../shared/resourceSchemas';
import { agentScorings } from '../../events';

/**
 * `EVALUATE AGENT … USING …`: how each answer is scored. A refusal names the option (its path);
 * an option no scoring reads is refused, not ignored.
 */
export const agentEvaluationOptions = z
  .object({
    scoring: z
      .enum(agentScorings)
      .optional()
      .describe("'exact' (the default), 'contains', 'numeric', 'sql_result' or 'llm_judge'"),
    tolerance: z
      .number()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe(
        'numeric: the largest absolute difference between the expected number and the answer’s first',
      ),
    rubric: wellFormedText(4_000).optional().describe('llm_judge: what the judge grades each answer by'),
    llm: z
      .record(z.string().max(100), z.unknown())
      .optional()
      .describe(
        'llm_judge: the judge’s model (provider, model_name, api_key, base_url); default the server’s',
      ),
  })
  .strict()
  .superRefine((o, issues) => {
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
  });

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
