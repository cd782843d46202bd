import type { AgentCreated } from '../../events';
import type { RowStore } from '../projection/types';
import { projectResourceReads, updatedRow, projectResourceTable } from '../projection/resourceTable';
import { NAME_AND_PROJECT, RESOURCE_IDS, RESOURCE_STAMPS } from '../projection/resourceColumns';
import { allHandled, type RowOf } from '../projection/table';
import { columns } from '../projection/columns';
import { maskSecrets } from '../shared/secrets';

type Links = AgentCreated['data']['skills'];

const skillColumns = async (links: Links, skills: RowStore) => {
  const names: string[] = [];
  const extra: Record<string, unknown> = {};
  for (const link of links) {
    const skill = await skills.get(BigInt(link.skillId));
    const name = (skill?.NAME as string | undefined) ?? String(link.skillId);
    names.push(name);
    extra[name] = maskSecrets(link.parameters);
  }
  return {
    SKILLS: names,
    SKILL_IDS: links.map((l) => BigInt(l.skillId)),
    SKILLS_EXTRA_PARAMETERS: extra,
    SKILL_LINKS: links.map((l) => ({ skillId: l.skillId, parameters: maskSecrets(l.parameters) })),
  };
};

/** An agent's own settings, as its row holds them. */
const ownCells = (d: Pick<AgentCreated['data'], 'modelName' | 'provider' | 'params'>) => ({
  MODEL_NAME: d.modelName,
  PROVIDER: d.provider,
  PARAMS: maskSecrets(d.params),
});

/** `agents`: one row per live agent; SKILLS holds skill names (MindsDB), SKILL_IDS the ids. */
export const agentsTable = projectResourceTable({
  table: 'agents',
  key: 'ID',
  history: true,
  columns: columns(
    NAME_AND_PROJECT,
    'MODEL_NAME VARCHAR NULL, SKILLS VARCHAR[], PARAMS JSON',
    RESOURCE_IDS,
    'PROVIDER VARCHAR NULL, SKILL_IDS BIGINT[], SKILLS_EXTRA_PARAMETERS JSON, SKILL_LINKS JSON',
    RESOURCE_STAMPS,
  ),
  handles: ['AgentCreated', 'AgentUpdated', 'AgentDeleted', 'SkillDetachedFromAgent', 'SkillUpdated'],
  createdBy: {
    type: 'AgentCreated',
    cells: async ({ data: d }, lookup) => ({
      ...ownCells(d),
      ...(await skillColumns(d.skills, lookup('skills'))),
    }),
  },
  deletedBy: { type: 'AgentDeleted', key: (e) => BigInt(e.data.agentId) },
  apply: async (event, rows, lookup) => {
    switch (event.type) {
      case 'AgentUpdated': {
        const d = event.data;
        const cells = { NAME: d.name, ...ownCells(d), ...(await skillColumns(d.skills, lookup('skills'))) };
        return updatedRow(rows, d.agentId, event.meta.position, d.updatedAt, cells);
      }
      case 'SkillDetachedFromAgent': {
        const d = event.data;
        const row = await rows.get(BigInt(d.agentId));
        if (!row) return;
        const links = (row.SKILL_LINKS as Links).filter((l) => l.skillId !== d.skillId);
        const cells = await skillColumns(links, lookup('skills'));
        return updatedRow(rows, d.agentId, event.meta.position, d.detachedAt, cells);
      }
      case 'SkillUpdated': {
        // A renamed skill is renamed in every agent that lists it.
        const d = event.data;
        const users = await rows.scan({ SKILL_IDS: BigInt(d.skillId) });
        for (const row of users)
          rows.put({ ...row, ...(await skillColumns(row.SKILL_LINKS as Links, lookup('skills'))) });
        return;
      }
      default:
        return allHandled(event);
    }
  },
});

export type AgentRow = RowOf<typeof agentsTable.columns>;

const reads = projectResourceReads(agentsTable);
export const agentRowsOfProject = reads.ofProject;
/** One agent of a project, by id or name. */
export const agentRowByRef = reads.byRef;
/** One agent of a project, by id only. */
export const agentRowById = reads.byId;
