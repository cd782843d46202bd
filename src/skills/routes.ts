import { forgetQuery } from '../shared/resourceSchemas';
import { z } from 'zod';
import { etag, ifMatchVersion, type Api } from '../http/api';
import { presentedOnce } from '../http/keptJson';
import {
  createResponses,
  deleteByCommand,
  deleteResponses,
  putResponses,
  readResponses,
} from '../http/resourceRoutes';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { skillBody as body } from './present';
import { createSkillBody, putSkillBody, skillPath, skillsPath, skillsQuery, skillView } from './schemas';
import type { SkillsService } from './service';

/** The reads of a project's skills. */
const skillReadRoutes = (api: Api, skills: SkillsService) =>
  api
    .add({
      method: 'get',
      path: '/api/projects/:project/skills',
      tag: 'skills',
      summary: 'List the skills of a project (optionally of one agent)',
      params: skillsPath,
      query: skillsQuery,
      responses: readResponses('Skills', z.array(skillView), 'Unknown project or agent'),
      handle: async ({ params, query }) => ({
        status: 200,
        // The project's list is the cached one (presented once for it); an agent's is made per request.
        body:
          query.agent === undefined
            ? presentedOnce(await skills.list(params.project), body)
            : (await skills.ofAgent(params.project, query.agent)).map(body),
        // A skill's body holds JSON values only (numbers, strings, params parsed from JSON): a list
        // the cache has not answered yet is serialised without a JSON-safe copy of a thousand skills.
        jsonSafe: true,
      }),
    })
    .add({
      method: 'get',
      path: '/api/projects/:project/skills/:skill',
      tag: 'skills',
      summary: 'Get a skill by name (case-insensitive) or id',
      params: skillPath,
      responses: readResponses('The skill', skillView, 'Unknown project or skill'),
      handle: async ({ params }) => {
        const skill = await skills.get(params.project, params.skill);
        return { status: 200, body: body(skill), headers: etag(skill.version) };
      },
    });

export const skillRoutes = (api: Api, skills: SkillsService, projects: ProjectDirectory) =>
  skillReadRoutes(api, skills)
    .add({
      method: 'post',
      path: '/api/projects/:project/skills',
      tag: 'skills',
      summary: 'Create a skill',
      params: skillsPath,
      before: projects.guard,
      body: createSkillBody,
      responses: createResponses(skillView, { 404: 'Unknown project', 409: 'A skill with that name exists' }),
      handle: async ({ params, body: { skill } }) => {
        const { skill: created } = await skills.run(params.project, {
          type: 'CreateSkill',
          data: { name: skill.name, type: skill.type, params: skill.params },
        });
        return { status: 201, body: body(created!), headers: etag(created!.version) };
      },
    })
    .add({
      method: 'put',
      path: '/api/projects/:project/skills/:skill',
      tag: 'skills',
      summary: 'Update a skill (params merged, null removes a key), or create it under the URL name',
      params: skillPath,
      before: projects.guard,
      body: putSkillBody,
      responses: putResponses(skillView, { 412: 'If-Match does not match' }),
      handle: async ({ params, body: { skill }, headers }) => {
        const result = await skills.run(params.project, {
          type: 'PutSkill',
          data: { ref: params.skill, ...skill, expectedVersion: ifMatchVersion(headers) },
        });
        return {
          status: result.created ? 201 : 200,
          body: body(result.skill!),
          headers: etag(result.skill!.version),
        };
      },
    })
    .add({
      method: 'delete',
      path: '/api/projects/:project/skills/:skill',
      tag: 'skills',
      summary:
        'Delete a skill (agents using it lose it, each detachment an event); ?forget=true also forgets its secrets for good',
      params: skillPath,
      query: forgetQuery,
      responses: deleteResponses('Unknown project or skill', 'Stale If-Match'),
      handle: deleteByCommand('skill', (project, target, options) =>
        skills.run(project, { type: 'DeleteSkill', data: target }, options),
      ),
    });
