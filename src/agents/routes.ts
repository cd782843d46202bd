import { forgetQuery } from '../shared/resourceSchemas';
import { z } from 'zod';
import { etag, ifMatchVersion, problem, type Api } from '../http/api';
import { presentedOnce } from '../http/keptJson';
import { createResponses, deleteByCommand, deleteResponses, readResponses } from '../http/resourceRoutes';
import type { ProjectDirectory } from '../shared/projectDirectory';
import {
  agentPath,
  agentsPath,
  agentView,
  createAgentBody,
  foldParams,
  toSkillRefs,
  updateAgentBody,
} from './schemas';
import type { PresentedAgent } from './present';
import type { AgentsService } from './service';

const viewOf = (agent: PresentedAgent) => agent.view;

/** The reads of a project's agents, and creating one. */
const agentReadRoutes = (api: Api, agents: AgentsService, projects: ProjectDirectory) =>
  api
    .add({
      method: 'get',
      path: '/api/projects/:project/agents',
      tag: 'agents',
      summary: 'List agents',
      params: agentsPath,
      responses: readResponses('Agents', z.array(agentView), 'Unknown project'),
      handle: async ({ params }) => ({
        status: 200,
        body: presentedOnce(await agents.list(params.project), viewOf),
      }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/agents/:agent',
      tag: 'agents',
      summary: 'Get an agent by name (case-insensitive) or id',
      params: agentPath,
      responses: readResponses('The agent', agentView, 'Unknown project or agent'),
      handle: async ({ params }) => {
        const agent = await agents.get(params.project, params.agent);
        return { status: 200, body: agent.view, headers: etag(agent.version) };
      },
    })
    .add({
      method: 'post',
      path: '/api/projects/:project/agents',
      tag: 'agents',
      summary: 'Create an agent (model_name/provider/params/skills, or model/data/prompt_template)',
      params: agentsPath,
      before: projects.guard,
      body: createAgentBody,
      responses: createResponses(agentView, {
        404: 'Unknown project, skill or model',
        409: 'An agent with that name exists',
      }),
      handle: async ({ params, body: { agent } }) => {
        const created = await agents.run(params.project, {
          type: 'CreateAgent',
          data: {
            name: agent.name,
            modelName: agent.model_name ?? null,
            provider: agent.provider ?? null,
            params: foldParams(agent),
            skills: toSkillRefs(agent.skills) ?? [],
          },
        });
        return { status: 201, body: created!.view, headers: etag(created!.version) };
      },
    });

export const agentRoutes = (api: Api, agents: AgentsService, projects: ProjectDirectory) => {
  const remove = deleteByCommand('agent', (project, target, options) =>
    agents.run(project, { type: 'DeleteAgent', data: target }, options),
  );
  return agentReadRoutes(api, agents, projects)
    .add({
      method: 'put',
      path: '/api/projects/:project/agents/:agent',
      tag: 'agents',
      summary: 'Update an agent (never creates one: 400, as MindsDB)',
      params: agentPath,
      before: projects.guard,
      body: updateAgentBody,
      responses: {
        200: { description: 'Updated', schema: agentView },
        400: problem('Missing agent, or skills together with skills_to_add/remove'),
        404: problem('Unknown skill or model'),
        409: problem('The new name is taken'),
        412: problem('Stale If-Match'),
      },
      handle: async ({ params, body: { agent }, headers }) => {
        const folded = foldParams(agent);
        const updated = await agents.run(params.project, {
          type: 'UpdateAgent',
          data: {
            ref: params.agent,
            name: agent.name,
            modelName: agent.model_name,
            provider: agent.provider,
            params: Object.keys(folded).length ? folded : undefined,
            skills: toSkillRefs(agent.skills),
            skillsToAdd: toSkillRefs(agent.skills_to_add),
            skillsToRemove: agent.skills_to_remove?.map(String),
            expectedVersion: ifMatchVersion(headers),
          },
        });
        return { status: 200, body: updated!.view, headers: etag(updated!.version) };
      },
    })
    .add({
      method: 'delete',
      path: '/api/projects/:project/agents/:agent',
      tag: 'agents',
      summary: 'Delete an agent (the path MindsDB clients use); chatbots using it stop',
      params: agentPath,
      query: forgetQuery,
      responses: deleteResponses('Unknown project or agent', 'Stale If-Match'),
      handle: remove,
    })
    .add({
      method: 'delete',
      path: '/api/projects/:project/agent/:agent',
      tag: 'agents',
      summary: 'Delete an agent (the singular path of the documentation)',
      params: agentPath,
      query: forgetQuery,
      responses: deleteResponses('Unknown project or agent', 'Stale If-Match'),
      handle: remove,
    });
};
