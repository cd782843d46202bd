import { settled, type AppContext } from '../context';
import { projectAggregate, projectStream } from '../projects/aggregate';
import type { ProjectsService } from '../projects/service';
import { notFound } from '../shared/errors';
import { findByRef, type Unstamped } from '../shared/params';
import { toMindsDbTimestamp } from '../shared/time';
import type { SkillsService } from '../skills/service';
import { decideAgent, type AgentCommand } from './decider';

type AgentRow = {
  ID: bigint;
  NAME: string;
  PROJECT_ID: bigint;
  MODEL_NAME: string | null;
  PROVIDER: string | null;
  PARAMS: string;
  SKILL_IDS: bigint[];
  SKILLS_EXTRA_PARAMETERS: string;
  CREATED_AT: Date;
  UPDATED_AT: Date;
  VERSION: bigint;
};

export type AgentView = Record<string, unknown> & { id: number; name: string };
export type AgentWithVersion = { view: AgentView; version: bigint };

export const agentsService = (ctx: AppContext, projects: ProjectsService, skills: SkillsService) => {
  /** MindsDB's `Agents.as_dict`: with skills, params whole; without, model/data/prompt_template lifted out. */
  const present = async (row: AgentRow, projectName: string): Promise<AgentWithVersion> => {
    const view: AgentView = {
      id: Number(row.ID),
      name: row.NAME,
      project_id: Number(row.PROJECT_ID),
      created_at: toMindsDbTimestamp(row.CREATED_AT),
      updated_at: toMindsDbTimestamp(row.UPDATED_AT),
    };
    if (row.MODEL_NAME) view.model_name = row.MODEL_NAME;
    if (row.PROVIDER) view.provider = row.PROVIDER;
    const params = JSON.parse(row.PARAMS) as Record<string, unknown>;
    if (row.SKILL_IDS.length > 0) {
      const all = await skills.list(projectName);
      view.skills = row.SKILL_IDS.map((id) => all.find((s) => BigInt(s.id) === id))
        .filter((s) => s !== undefined)
        .map(({ version: _v, ...s }) => s);
      view.skills_extra_parameters = JSON.parse(row.SKILLS_EXTRA_PARAMETERS) as Record<string, unknown>;
      view.params = params;
    } else {
      const { data, model, prompt_template, ...rest } = params;
      if (data !== undefined) view.data = data;
      if (model !== undefined) view.model = model;
      if (prompt_template !== undefined) view.prompt_template = prompt_template;
      if (Object.keys(rest).length > 0) view.params = rest;
    }
    return { view, version: row.VERSION };
  };

  const list = (projectName: string) =>
    ctx.cached(`agents:${projectName.toLowerCase()}`, async () => {
      const project = await projects.require(projectName);
      const rows = (await ctx.duck.query('SELECT * FROM agents WHERE PROJECT_ID = ? ORDER BY ID', [
        BigInt(project.id),
      ])) as AgentRow[];
      return Promise.all(rows.map((r) => present(r, project.name)));
    });

  const get = async (projectName: string, ref: string): Promise<AgentWithVersion> => {
    const found = findByRef(await list(projectName), ref, (a) => a.view);
    if (!found) throw notFound(`Agent with name ${ref} does not exist`, 'Agent not found');
    return found;
  };

  const run = async (projectName: string, unstamped: Unstamped<AgentCommand>) => {
    const command = { ...unstamped, metadata: { now: ctx.clock() } } as AgentCommand;
    const project = await projects.require(projectName);
    const outcome = await ctx.commands.run(projectStream(project.name), projectAggregate, (s) =>
      decideAgent(command, s),
    );
    await settled(ctx, outcome.lastPosition);
    const first = outcome.events[0];
    if (!first || first.type === 'AgentDeleted') return undefined;
    const id =
      first.type === 'AgentCreated'
        ? first.meta.position
        : BigInt((first.data as { agentId: number }).agentId);
    return get(project.name, String(id));
  };

  return { list, get, run };
};

export type AgentsService = ReturnType<typeof agentsService>;
