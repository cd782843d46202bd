import { settled, type AppContext } from '../context';
import { projectAggregate, projectStream } from '../projects/aggregate';
import type { ProjectsService } from '../projects/service';
import { notFound } from '../shared/errors';
import { findByRef, type Unstamped } from '../shared/params';
import { toMindsDbTimestamp } from '../shared/time';
import { decideSkill, type SkillCommand } from './decider';
import type { SkillView } from './schemas';

type SkillRow = {
  ID: bigint;
  NAME: string;
  PROJECT_ID: bigint;
  TYPE: string;
  PARAMS: string;
  CREATED_AT: Date;
  UPDATED_AT: Date;
  VERSION: bigint;
};

export type SkillWithVersion = SkillView & { version: bigint };

const present = (row: SkillRow, agentIds: number[]): SkillWithVersion => ({
  id: Number(row.ID),
  name: row.NAME,
  project_id: Number(row.PROJECT_ID),
  agent_ids: agentIds,
  type: row.TYPE,
  params: JSON.parse(row.PARAMS) as Record<string, unknown>,
  created_at: toMindsDbTimestamp(row.CREATED_AT),
  updated_at: toMindsDbTimestamp(row.UPDATED_AT),
  version: row.VERSION,
});

/** Reads come from the `skills` and `agents` projections; writes go through the project's stream. */
export const skillsService = (ctx: AppContext, projects: ProjectsService) => {
  const agentIdsBySkill = async (projectId: number) => {
    const agents = (await ctx.duck.query(
      'SELECT ID, SKILL_IDS FROM agents WHERE PROJECT_ID = ? ORDER BY ID',
      [BigInt(projectId)],
    )) as { ID: bigint; SKILL_IDS: bigint[] }[];
    const bySkill = new Map<bigint, number[]>();
    for (const a of agents)
      for (const s of a.SKILL_IDS) bySkill.set(s, [...(bySkill.get(s) ?? []), Number(a.ID)]);
    return bySkill;
  };

  const list = (projectName: string, agentRef?: string) =>
    ctx.cached(`skills:${projectName.toLowerCase()}:${agentRef ?? ''}`, async () => {
      const project = await projects.require(projectName);
      const rows = (await ctx.duck.query('SELECT * FROM skills WHERE PROJECT_ID = ? ORDER BY ID', [
        BigInt(project.id),
      ])) as SkillRow[];
      const agents = await agentIdsBySkill(project.id);
      let selected = rows;
      if (agentRef !== undefined) {
        const agent = (
          (await ctx.duck.query(
            'SELECT ID, SKILL_IDS FROM agents WHERE PROJECT_ID = ? AND (lower(NAME) = lower(?) OR CAST(ID AS VARCHAR) = ?)',
            [BigInt(project.id), agentRef, agentRef],
          )) as { ID: bigint; SKILL_IDS: bigint[] }[]
        )[0];
        if (!agent) throw notFound(`Agent with name ${agentRef} does not exist`, 'Agent not found');
        selected = rows.filter((r) => agent.SKILL_IDS.includes(r.ID));
      }
      return selected.map((r) => present(r, agents.get(r.ID) ?? []));
    });

  const get = async (projectName: string, ref: string): Promise<SkillWithVersion> => {
    const found = findByRef(await list(projectName), ref);
    if (!found) throw notFound(`Skill with name ${ref} not found.`, 'Skill not found');
    return found;
  };

  /** Runs a skill command; returns the skill it created or changed (none for a delete). */
  const run = async (projectName: string, unstamped: Unstamped<SkillCommand>) => {
    const command = { ...unstamped, metadata: { now: ctx.clock() } } as SkillCommand;
    const project = await projects.require(projectName);
    const outcome = await ctx.commands.run(projectStream(project.name), projectAggregate, (s) =>
      decideSkill(command, s),
    );
    await settled(ctx, outcome.lastPosition);
    const first = outcome.events[0];
    if (!first || first.type === 'SkillDeleted') return { created: false, skill: undefined };
    const id =
      first.type === 'SkillCreated'
        ? first.meta.position
        : BigInt((first.data as { skillId: number }).skillId);
    return { created: first.type === 'SkillCreated', skill: await get(project.name, String(id)) };
  };

  return { list, get, run };
};

export type SkillsService = ReturnType<typeof skillsService>;
