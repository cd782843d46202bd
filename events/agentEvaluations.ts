import { z } from 'zod';
import { defineEvent, type EventOf, type ResourceDeclaration } from './contract';

const agentResource: ResourceDeclaration = { kind: 'agent', id: 'agentId' };

const share = z.number().min(0).max(1);

/** At most this many cases in one agent evaluation (each is a run of the agent, kept in the event). */
export const MAX_AGENT_EVALUATION_CASES = 200;
/** Each case's question, expected answer (or SQL) and the agent's answer are kept to this many characters. */
export const AGENT_EVALUATION_EXCERPT = 500;

/** How an answer is scored (docs/agents.md "Evaluating an agent"). */
export const agentScorings = ['exact', 'contains', 'numeric', 'sql_result', 'llm_judge'] as const;

const excerpt = z.string().max(AGENT_EVALUATION_EXCERPT);

/**
 * `EVALUATE AGENT p.a FROM <test set> USING scoring = …`: every question of a test set asked of
 * the agent (each a run of its own, recorded on `agent-run-<traceId>`), each answer scored, and
 * the whole kept as one event on the agent's evaluations stream (`agent-evaluations-<agentId>`),
 * with the agent's version (the log position of its definition), so two versions compare case
 * by case. The cases are bounded (count and excerpts); the runs hold the answers whole.
 */
export const AgentEvaluated = defineEvent(
  'AgentEvaluated',
  z.object({
    agentId: z.number().int(),
    project: z.string(),
    /** The agent's name when evaluated. */
    name: z.string(),
    /** The log position of the agent's definition the runs used (its ETag; as AgentRunStarted's). */
    agentVersion: z.string(),
    scoring: z.enum(agentScorings),
    /** `numeric`: the largest absolute difference that passes. */
    tolerance: z.number().min(0).nullable(),
    /** `llm_judge`: what the judge was told to grade by. */
    rubric: z.string().nullable(),
    /** `llm_judge`: the judge's model, summarised (no key). */
    judge: z.object({ provider: z.string(), model: z.string(), baseUrl: z.string().nullable() }).nullable(),
    /** Where the cases were read: `db.table`, or the SELECT as written (bounded). */
    source: z.string().max(2_000),
    /** sha256 of the (question, expected) pairs in order: equal digests, the same test set. */
    testSetDigest: z.string().regex(/^[0-9a-f]{64}$/),
    cases: z
      .array(
        z.object({
          question: excerpt,
          expected: excerpt,
          answer: excerpt,
          score: share,
          passed: z.boolean(),
          /** The case's run (replayable without the model); null when the run never started. */
          traceId: z.string().nullable(),
          /** Why the case scored 0 without an answer (the run failed, the SQL failed). */
          error: excerpt.nullable(),
        }),
      )
      .max(MAX_AGENT_EVALUATION_CASES),
    passed: z.number().int().min(0),
    passRate: share,
    meanScore: share,
    /** Mean wall time of one case (its run and its scoring), in milliseconds. */
    msPerCase: z.number().min(0),
    evaluatedAt: z.iso.datetime(),
  }),
  { resource: agentResource },
);

export type AgentEvaluated = EventOf<typeof AgentEvaluated>;
export type AgentEvaluationEvent = AgentEvaluated;
export const agentEvaluationContracts = [AgentEvaluated] as const;
