import { AgentRunProblem } from '../agentRuns/service';
import type { AppContext } from '../context';
import { A2aAskFailed, type A2aAgent, type A2aPorts } from '../a2a/ports';
import { isDomainError } from '../shared/errors';
import { VERSION } from '../shared/version';
import { refusalOf } from '../users/roles';
import type { Services } from './services';

const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : null);

/**
 * The A2A server's ports on the running service: agents as REST reads them (the read model, secrets
 * masked), their runs as REST's completions run them (recorded on their own streams, `via` a2a,
 * in the thread the task's context names), and who may: the very rules of the REST routes.
 */
export const a2aPorts = (_ctx: AppContext, services: Services): A2aPorts => ({
  describeAgent: async (projectName, agentRef): Promise<A2aAgent> => {
    const project = await services.projects.require(projectName);
    const { view, version } = await services.agents.get(project.name, agentRef);
    const params = (view.params ?? {}) as Record<string, unknown>;
    const skills = (Array.isArray(view.skills) ? view.skills : []) as Record<string, unknown>[];
    return {
      projectId: project.id,
      agentId: view.id,
      project: project.name,
      name: view.name,
      description: text(params.description),
      version: version.toString(),
      skills: skills.map((s) => ({
        name: String(s.name),
        type: String(s.type),
        description: text((s.params as Record<string, unknown> | undefined)?.description),
      })),
    };
  },
  ask: async (request, handlers) => {
    const run = await services.agentRuns
      .prepare({
        project: request.project,
        agent: request.agent,
        messages: [{ role: 'user', content: request.question }],
        threadId: request.threadId,
        traceId: request.traceId,
        via: 'a2a',
      })
      .catch((error: unknown) => {
        if (isDomainError(error)) throw new A2aAskFailed('invalid', error.detail, false);
        throw error;
      });
    try {
      return await run.execute({ signal: handlers.signal, onStep: handlers.onStep });
    } catch (error) {
      if (error instanceof AgentRunProblem) throw new A2aAskFailed(error.runKind, error.detail, true);
      if (isDomainError(error)) throw new A2aAskFailed('invalid', error.detail, false);
      throw error;
    }
  },
  refusal: (principal, project, agent, what) => {
    const path = `/api/projects/${encodeURIComponent(project)}/agents/${encodeURIComponent(agent)}`;
    return what === 'ask'
      ? refusalOf(principal, 'POST', `${path}/completions`)
      : refusalOf(principal, 'GET', path);
  },
  authEnabled: () => services.users.enabled(),
  serverVersion: VERSION,
});
