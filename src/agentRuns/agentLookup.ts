import { loadProject } from '../projectCommand';
import { canonicalSkillKind, normalizeMessages, type AgentSkill } from '../engines/agentLoop';
import { requireAgent } from '../agents/state';
import type { AppContext } from '../context';
import type { ChatMessage } from '../engines/llm';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { skillById } from '../skills/state';
import { threadAggregate, threadStream } from './state';

/** The agent as the project's stream holds it (real settings), with its skills resolved. */
export const loadAgent = async (
  ctx: AppContext,
  projects: ProjectDirectory,
  projectName: string,
  agentRef: string,
) => {
  const project = await projects.require(projectName);
  const state = await loadProject(ctx, projects, project.name);
  const agent = requireAgent(state.agents, agentRef);
  const skills: AgentSkill[] = agent.skills.flatMap((link) => {
    const skill = skillById(state.skills, link.skillId);
    return skill
      ? [{ name: skill.name, type: skill.type, params: skill.params, linkParameters: link.parameters }]
      : [];
  });
  return { project, agent, skills };
};

export type LoadedAgent = Awaited<ReturnType<typeof loadAgent>>;
/** loadAgent with the service's context and projects given. */
export type AgentLoader = (projectName: string, agentRef: string) => Promise<LoadedAgent>;

/** The read model includes every run this process recorded (a failed projection is reported elsewhere). */
export const caughtUp = (ctx: AppContext) => ctx.projections.catchUp().catch(() => undefined);

/** A thread's earlier turns, then this request's messages, as one conversation. */
export const withThread = async (
  ctx: AppContext,
  request: { readonly messages: unknown; readonly threadId?: string },
  agentName: string,
  projectName: string,
) => {
  if (request.threadId === undefined) return request.messages;
  const asked = normalizeMessages(request.messages);
  const { state } = await ctx.commands.load(
    threadStream(projectName, agentName, request.threadId),
    threadAggregate,
  );
  const remembered: ChatMessage[] = state.turns.flatMap((t) => [
    { role: 'user', content: t.question },
    { role: 'assistant', content: t.answer },
  ]);
  return [...remembered, ...asked.history, { role: 'user', content: asked.question }];
};

/** The database each SQL tool of the agent reads unqualified names in: its skill's (else the project). */
export const toolDatabases = (project: string, skills: readonly AgentSkill[]) => {
  const sql = skills.filter((s) => canonicalSkillKind(s.type) === 'sql');
  const databaseOf = (s: AgentSkill) =>
    typeof s.params.database === 'string' && s.params.database !== '' ? s.params.database : project;
  const suffix = (name: string) =>
    name
      .replace(/[^a-zA-Z0-9_-]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 30);
  return (tool: string) => {
    const named = sql.find((s) => tool.endsWith(`_${suffix(s.name)}`));
    const skill = named ?? sql[0];
    return skill ? databaseOf(skill) : project;
  };
};
