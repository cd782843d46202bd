import { resolveLlmSettings, type LlmDefaults, type LlmEngineResolver, type LlmSettings } from '../llm';
import type { RunLimits } from './events';
import { normalizeMessages } from './messages';
import { buildSystemPrompt } from './prompt';
import type { RunAgentInput } from './runAgent';
import { toolsFromSkills, type AgentData, type AgentSkill, type AgentToolPorts } from './skills';

/** An agent as stored (both MindsDB shapes), with its skills resolved at run start. */
type StoredAgent = {
  readonly modelName: string | null;
  readonly provider: string | null;
  readonly params: Readonly<Record<string, unknown>>;
  readonly skills: readonly AgentSkill[];
};

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const positive = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
};

const stringList = (v: unknown): string[] | undefined =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;

/** MindsDB's knobs: v25 `max_iterations`, v26 `timeout` (seconds); ours: `max_steps`, `timeout_ms`. */
export const runLimitsFromParams = (params: Readonly<Record<string, unknown>>): Partial<RunLimits> => {
  const seconds = positive(params.timeout);
  return {
    maxSteps: positive(params.max_steps) ?? positive(params.max_iterations),
    timeoutMs: positive(params.timeout_ms) ?? (seconds !== undefined ? seconds * 1000 : undefined),
  };
};

const dataOf = (params: Readonly<Record<string, unknown>>): AgentData | undefined => {
  const data = params.data;
  if (!isRecord(data)) return undefined;
  return { tables: stringList(data.tables), knowledge_bases: stringList(data.knowledge_bases) };
};

/**
 * Everything a run needs from a stored agent and a completion request: LLM settings (the caller
 * makes the client, so it can share or cache them), the normalised messages, the tools, the system
 * prompt and the limits. `overrides` are a SQL query's `USING …` (model, prompt_template, timeout,
 * data, max_iterations …) and win over the stored params.
 * Throws InvalidMessagesError, LlmConfigError or AgentSetupError: all client mistakes (400).
 */
export const planAgentRun = async (input: {
  readonly agent: StoredAgent;
  readonly messages: unknown;
  readonly overrides?: Readonly<Record<string, unknown>>;
  readonly ports: AgentToolPorts;
  readonly llm?: { readonly defaults?: LlmDefaults; readonly engines?: LlmEngineResolver };
  readonly tools?: { readonly queryLimit?: number; readonly sampleRows?: number; readonly kbLimit?: number };
}): Promise<{
  settings: LlmSettings;
  run: Omit<RunAgentInput, 'llm' | 'signal' | 'onEvent' | 'onTextDelta'>;
}> => {
  const params: Record<string, unknown> = { ...input.agent.params, ...(input.overrides ?? {}) };
  const messages = normalizeMessages(input.messages, {
    userColumn: typeof params.user_column === 'string' ? params.user_column : undefined,
    assistantColumn: typeof params.assistant_column === 'string' ? params.assistant_column : undefined,
  });
  const settings = await resolveLlmSettings(
    {
      modelName: input.agent.modelName,
      provider: input.agent.provider,
      params: input.agent.params,
      overrides: input.overrides,
    },
    input.llm,
  );
  const tools = toolsFromSkills(
    { skills: input.agent.skills, data: dataOf(params) },
    input.ports,
    input.tools,
  );
  return {
    settings,
    run: {
      model: settings.model,
      systemPrompt: buildSystemPrompt({
        promptTemplate: typeof params.prompt_template === 'string' ? params.prompt_template : undefined,
        tools,
        row: messages.lastRow,
      }),
      history: messages.history,
      question: messages.question,
      tools,
      limits: runLimitsFromParams(params),
      temperature: settings.temperature ?? 0,
    },
  };
};
