import type { AgentsService } from './service';
import type { AgentEvaluationsService } from './evaluation';
import { agentEvaluationOptions } from './evaluationSchemas';
import { invalid } from '../shared/errors';
import type { Params } from '../shared/params';
import type { Options, UsingValue } from '../sql/parse';
import {
  byName,
  createByName,
  dropByName,
  evaluateByName,
  optionObject,
  optionText,
  ownProject,
  type SqlCatalog,
  type StatementHandlers,
} from '../sql/handlers';

const skillRefs = (key: string, v: UsingValue | undefined) => {
  if (v === undefined) return undefined;
  const list = Array.isArray(v) ? v : [v];
  return list.map((item) => {
    if (typeof item === 'string' || typeof item === 'number') return { ref: String(item), parameters: {} };
    if (item && typeof item === 'object' && !Array.isArray(item) && typeof item.name === 'string') {
      const { name, ...parameters } = item;
      return { ref: name, parameters };
    }
    throw invalid(`${key} must list skill names or {"name": …} objects`);
  });
};

/** Splits `USING`/`SET` options into an agent's fields (MindsDB's SQL shape) and its params. */
const agentOptions = (options: Options) => {
  const { model, provider, skills, skills_to_add, skills_to_remove, name, ...params } = options;
  const out: {
    name?: string;
    modelName?: string | null;
    provider?: string | null;
    params: Params;
    skills?: { ref: string; parameters: Params }[];
    skillsToAdd?: { ref: string; parameters: Params }[];
    skillsToRemove?: string[];
  } = { params: { ...params } };
  if (typeof model === 'string') out.modelName = model;
  else if (model !== undefined && model !== null) out.params.model = optionObject('model', model);
  if (provider !== undefined) out.provider = optionText('provider', provider) ?? null;
  if (name !== undefined) out.name = optionText('name', name);
  out.skills = skillRefs('skills', skills);
  out.skillsToAdd = skillRefs('skills_to_add', skills_to_add);
  out.skillsToRemove = skillRefs('skills_to_remove', skills_to_remove)?.map((r) => r.ref);
  return out;
};

/** CREATE AGENT, UPDATE / ALTER AGENT and DROP AGENT [FORGET], through the agents service (as REST). */
export const agentStatements = (agents: Pick<AgentsService, 'get' | 'run'>) =>
  ({
    CreateAgent: createByName(agents.get, async (project, name, options) => {
      const a = agentOptions(options);
      await agents.run(project, {
        type: 'CreateAgent',
        data: {
          name,
          modelName: a.modelName ?? null,
          provider: a.provider ?? null,
          params: a.params,
          skills: a.skills ?? [],
        },
      });
    }),
    UpdateAgent: byName(async (project, name, statement) => {
      const a = agentOptions(statement.options);
      await agents.run(project, {
        type: 'UpdateAgent',
        data: {
          ref: name,
          name: a.name,
          modelName: a.modelName,
          provider: a.provider,
          params: Object.keys(a.params).length ? a.params : undefined,
          skills: a.skills,
          skillsToAdd: a.skillsToAdd,
          skillsToRemove: a.skillsToRemove,
        },
      });
    }),
    DropAgent: dropByName((project, ref, _ifExists, options) =>
      agents.run(project, { type: 'DeleteAgent', data: { ref } }, options),
    ),
  }) satisfies StatementHandlers<'CreateAgent' | 'UpdateAgent' | 'DropAgent'>;

/** The summary row EVALUATE AGENT answers (its cases: information_schema.AGENT_EVALUATION_CASES). */
const EVALUATION_COLUMNS = [
  ['id', 'BIGINT'],
  ['agent', 'VARCHAR'],
  ['agent_version', 'BIGINT'],
  ['scoring', 'VARCHAR'],
  ['cases', 'BIGINT'],
  ['passed', 'BIGINT'],
  ['pass_rate', 'DOUBLE'],
  ['mean_score', 'DOUBLE'],
  ['ms_per_case', 'DOUBLE'],
  ['test_set_digest', 'VARCHAR'],
  ['created_at', 'VARCHAR'],
] as const;

/** EVALUATE AGENT p.a FROM db.t | (SELECT …) USING scoring = …: one row, the evaluation's summary. */
export const agentEvaluationStatements = (evaluations: Pick<AgentEvaluationsService, 'evaluate'>) =>
  ({
    EvaluateAgent: evaluateByName('AGENT', agentEvaluationOptions, async (project, options, s, context) => {
      const result = await evaluations.evaluate(project, s.name.name, s.from, context.db, options);
      return {
        type: 'table',
        column_names: EVALUATION_COLUMNS.map(([n]) => n),
        column_types: EVALUATION_COLUMNS.map(([, t]) => t),
        data: [EVALUATION_COLUMNS.map(([n]) => result[n])],
      };
    }),
  }) satisfies StatementHandlers<'EvaluateAgent'>;

/**
 * information_schema.AGENTS, and every project's agents table. MODEL_NAME is the agent's own
 * (`model_name`, `USING model = 'x'`), else the `model_name` of MindsDB v26's `model = {…}` object,
 * which the agent keeps in its params.
 */
export const agentCatalog = {
  informationSchema: {
    AGENTS: `SELECT NAME, PROJECT, COALESCE(MODEL_NAME, json_extract_string(PARAMS, '$.model.model_name')) AS MODEL_NAME, SKILLS, CAST(PARAMS AS VARCHAR) AS PARAMS FROM main.agents ORDER BY ID`,
    // Every EVALUATE AGENT, and each of its cases (src/agents/evaluation.ts).
    AGENT_EVALUATIONS: `SELECT ID, PROJECT, AGENT, AGENT_VERSION, SCORING, TOLERANCE, RUBRIC, JUDGE_PROVIDER, JUDGE_MODEL,
      SOURCE, TEST_SET_DIGEST, CASES, PASSED, PASS_RATE, MEAN_SCORE, MS_PER_CASE, CREATED_AT
      FROM main.agent_evaluations ORDER BY ID`,
    AGENT_EVALUATION_CASES: `SELECT EVALUATION_ID, CASE_NUMBER, PROJECT, AGENT, AGENT_VERSION, QUESTION, EXPECTED,
      ANSWER, SCORE, PASSED, TRACE_ID, ERROR FROM main.agent_evaluation_cases ORDER BY EVALUATION_ID, CASE_NUMBER`,
  },
  projectTables: { agents: 'AGENTS' },
  scopedRows: { agents: ownProject, agent_evaluations: ownProject, agent_evaluation_cases: ownProject },
  // Each agent's evaluations (evaluation.ts `agentEvaluationsStream`).
  projectStreams: (ofProject) =>
    `stream IN (SELECT 'agent-evaluations-' || ID FROM main.agents WHERE ${ofProject})`,
} satisfies SqlCatalog;
