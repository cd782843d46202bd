import { loadProject } from '../projectCommand';
import type { ProjectDirectory } from '../shared/projectDirectory';
import type { AppContext } from '../context';
import { notFound } from '../shared/errors';
import { findByRef } from '../shared/params';
import { caughtUp, loadAgent, toolDatabases, type AgentLoader } from './agentLookup';
import { agentCompletions, type CompletionHandlers, type CompletionRequest } from './completion';
import { forkRun } from './fork';
import type { AgentRunPorts } from './ports';
import { presentRun, presentStep } from './present';
import { runRow, runRowsOfAgent, stepRowsOfRun } from './projection';
import { runReplay } from './replay';

export { AgentRunProblem } from './completion';
export type { Completion } from './completion';
/** Agents that answer: each completion is a run recorded on its own stream, step by step. */
export const agentRunsService = (ctx: AppContext, projects: ProjectDirectory, ports: AgentRunPorts) => {
  const load: AgentLoader = (projectName, agentRef) => loadAgent(ctx, projects, projectName, agentRef);
  const { prepare, inFlight } = agentCompletions(ctx, ports, load);

  const requireRunOf = async (projectName: string, agentRef: string, traceId: string) => {
    const { project, agent } = await load(projectName, agentRef);
    await caughtUp(ctx);
    const row = await runRow(ctx.duck, traceId);
    if (!row || row.PROJECT_ID !== BigInt(project.id) || row.AGENT_ID !== agent.id)
      throw notFound(`Agent ${agent.name} has no run ${traceId}`, 'Run not found');
    return row;
  };

  const replayRun = runReplay(ctx, ports.replay);

  return {
    prepare,
    /**
     * A run replayed from its events, no model called: its steps and answer as recorded, each SQL
     * read again as of the position it ran at and as of now, the steps whose answer differs named.
     */
    replay: async (projectName: string, agentRef: string, traceId: string) => {
      const { project, agent, skills } = await load(projectName, agentRef);
      return replayRun(project, agent, traceId, toolDatabases(project.name, skills));
    },

    /**
     * Continues a conversation from an earlier turn: a new thread (`thread_id`, or one made up)
     * holding the conversation up to and including run `traceId`, then the question asked in it.
     * The original thread is left as it is.
     */
    fork: (
      projectName: string,
      agentRef: string,
      traceId: string,
      request: { messages: unknown; threadId?: string },
      handlers?: CompletionHandlers,
    ) => forkRun({ ctx, loadAgent: load, prepare }, projectName, agentRef, traceId, request, handlers),

    /** Runs executing in this process now. */
    inFlight,
    /** Prepare and run in one go (REST without streaming, SQL). */
    complete: async (request: CompletionRequest, handlers: CompletionHandlers = {}) =>
      (await prepare(request)).execute(handlers),

    /** An agent's runs, newest first. */
    runs: async (projectName: string, agentRef: string, page: { before?: bigint; limit: number }) => {
      const { project, agent } = await load(projectName, agentRef);
      await caughtUp(ctx);
      return (await runRowsOfAgent(ctx.duck, project.id, Number(agent.id), page)).map(presentRun);
    },

    /** One run, step by step. */
    run: async (projectName: string, agentRef: string, traceId: string) => {
      const row = await requireRunOf(projectName, agentRef, traceId);
      return { ...presentRun(row), steps: (await stepRowsOfRun(ctx.duck, traceId)).map(presentStep) };
    },

    /** An agent by name or id exists in the project (routes check it before reading a body). */
    requireAgent: async (projectName: string, agentRef: string) => {
      await load(projectName, agentRef);
    },

    findAgentName: async (projectName: string, name: string) => {
      const project = await projects.find(projectName);
      if (!project) return undefined;
      const state = await loadProject(ctx, projects, project.name);
      return findByRef(state.agents.values(), name)?.name;
    },
  };
};

export type AgentRunsService = ReturnType<typeof agentRunsService>;
