import type { AppContext } from '../context';
import { resourceRun } from '../projectCommand';
import type { ProjectAggregate } from '../shared/projectState';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { notFound } from '../shared/errors';
import type { Unstamped } from '../shared/params';
import { writtenResource } from '../shared/writtenResource';
import { decideSkill, type SkillCommand } from './decider';
import { presentSkill, presentSkillState, type PresentedSkill } from './present';
import { skillRowByRef, skillRowsByIds, skillRowsOfProject } from './projection';
import { agentsUsingSkill, skillById } from './state';

/** How `GET …/skills?agent=` finds the agent it names (by name or id), or undefined. */
type AgentIds = { idOf(projectName: string, ref: string): Promise<number | undefined> };

/** Reads come from the `skills` projection; writes go through the project's stream. */
export const skillsService = (ctx: AppContext, projects: ProjectDirectory, agents: AgentIds) => {
  const list = (projectName: string) =>
    ctx.cached(`skills:${projectName.toLowerCase()}`, async () => {
      const project = await projects.require(projectName);
      return (await skillRowsOfProject(ctx.duck, project.id)).map(presentSkill);
    });

  const ofAgent = async (projectName: string, agentRef: string): Promise<PresentedSkill[]> => {
    const all = await list(projectName);
    const agentId = await agents.idOf(projectName, agentRef);
    if (agentId === undefined)
      throw notFound(`Agent with name ${agentRef} does not exist`, 'Agent not found');
    return all.filter((s) => s.agent_ids.includes(agentId));
  };

  const get = async (projectName: string, ref: string): Promise<PresentedSkill> => {
    const project = await projects.require(projectName);
    const row = await skillRowByRef(ctx.duck, project.id, ref);
    if (!row) throw notFound(`Skill with name ${ref} not found.`, 'Skill not found');
    return presentSkill(row);
  };

  /** The skill a write just made or changed, as the state its command produced holds it. */
  const written = (state: ProjectAggregate, id: bigint): PresentedSkill => {
    const skill = skillById(state.skills, id);
    if (!skill || state.project.status !== 'live')
      throw new Error(`skill ${id} must be live after its write`);
    const agentIds = agentsUsingSkill(state.agents, id)
      .map((agent) => agent.id)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return presentSkillState(skill, state.project.id, agentIds);
  };

  /** The skills with these ids (an agent's), read alone. */
  const byIds = async (projectName: string, ids: readonly bigint[]): Promise<PresentedSkill[]> => {
    const project = await projects.require(projectName);
    return (await skillRowsByIds(ctx.duck, project.id, ids)).map(presentSkill);
  };

  const write = resourceRun<Unstamped<SkillCommand>>(ctx, projects, {
    decide: decideSkill,
    answer: 'ahead',
    deletedBy: 'SkillDeleted',
  });
  /**
   * Runs a skill command; returns the skill it created or changed (none for a delete). `forget`: a
   * delete forgets the skill's secrets too, under every name it had (crypto-shredding). The answer
   * is made from the command's own state, so it is given once the log has the events; this
   * process's reads wait for them instead (answeredAhead): skill writes come in bursts into one
   * project (group-committed), and a writer no longer waits for the read model's DuckDB batch.
   */
  const run = async (...args: Parameters<typeof write>) => {
    const outcome = await write(...args);
    const made = writtenResource(outcome.events, ['SkillCreated', 'SkillUpdated'], (e) => e.data.skillId);
    return { created: made?.created ?? false, skill: made && written(outcome.state, made.id) };
  };

  return { list, ofAgent, get, byIds, run };
};

export type SkillsService = ReturnType<typeof skillsService>;
