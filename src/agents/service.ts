import type { AppContext } from '../context';
import { resourceRun } from '../projectCommand';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { notFound } from '../shared/errors';
import type { Unstamped } from '../shared/params';
import { writtenResource } from '../shared/writtenResource';
import { decideAgent, type AgentCommand } from './decider';
import { presentAgent, type LinkedSkill, type PresentedAgent } from './present';
import { agentRowById, agentRowByRef, agentRowsOfProject, type AgentRow } from './projection';

/** The skills of a project as an agent shows them (the skills service answers it). */
type ProjectSkills = {
  list(projectName: string): Promise<readonly LinkedSkill[]>;
  /** Only the skills with these ids (one agent's): answering about one agent reads no others. */
  byIds(projectName: string, ids: readonly bigint[]): Promise<readonly LinkedSkill[]>;
};

export const agentsService = (ctx: AppContext, projects: ProjectDirectory, skills: ProjectSkills) => {
  const list = (projectName: string) =>
    ctx.cached(`agents:${projectName.toLowerCase()}`, async () => {
      const project = await projects.require(projectName);
      const rows = await agentRowsOfProject(ctx.duck, project.id);
      const linked = rows.some((r) => r.SKILL_IDS.length > 0) ? await skills.list(project.name) : [];
      return rows.map((r) => presentAgent(r, linked));
    });

  const rowOf = async (projectName: string, ref: string) => {
    const project = await projects.require(projectName);
    return { project, row: await agentRowByRef(ctx.duck, project.id, ref) };
  };

  /** An agent's row as the API shows it, with its own skills only. */
  const presented = async (projectName: string, row: AgentRow): Promise<PresentedAgent> =>
    presentAgent(row, row.SKILL_IDS.length > 0 ? await skills.byIds(projectName, row.SKILL_IDS) : []);

  const get = async (projectName: string, ref: string): Promise<PresentedAgent> => {
    const { project, row } = await rowOf(projectName, ref);
    if (!row) throw notFound(`Agent with name ${ref} does not exist`, 'Agent not found');
    return presented(project.name, row);
  };

  /** The agent with this id (never a name that happens to be these digits), or undefined. */
  const byId = async (projectName: string, id: number): Promise<PresentedAgent | undefined> => {
    const project = await projects.require(projectName);
    const row = await agentRowById(ctx.duck, project.id, BigInt(id));
    return row ? presented(project.name, row) : undefined;
  };

  const write = resourceRun<Unstamped<AgentCommand>>(ctx, projects, {
    decide: decideAgent,
    answer: 'settled',
    deletedBy: 'AgentDeleted',
  });
  /** `forget`: a delete forgets the agent's secrets too, under every name it had (crypto-shredding). */
  const run = async (...args: Parameters<typeof write>) => {
    const outcome = await write(...args);
    const made = writtenResource(outcome.events, ['AgentCreated', 'AgentUpdated'], (e) => e.data.agentId);
    return made && get(outcome.project, String(made.id));
  };

  return {
    list,
    get,
    byId,
    run,
    /** For `GET …/skills?agent=`: the agent's id by name or id, or undefined. */
    idOf: async (projectName: string, ref: string) => {
      const { row } = await rowOf(projectName, ref);
      return row ? Number(row.ID) : undefined;
    },
  };
};

export type AgentsService = ReturnType<typeof agentsService>;
