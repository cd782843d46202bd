import type { RowStore, TableLookup } from '../projection/types';
import { projectResourceReads, updatedRow, projectResourceTable } from '../projection/resourceTable';
import { NAME_AND_PROJECT, RESOURCE_IDS, RESOURCE_STAMPS } from '../projection/resourceColumns';
import { allHandled, type RowOf } from '../projection/table';
import { columns } from '../projection/columns';
import { maskSecrets } from '../shared/secrets';

/** The ids of the agents using a skill, kept on the skill's row so reading a skill never scans agents. */
const withAgent = (ids: readonly bigint[], agentId: bigint, uses: boolean) => {
  const others = ids.filter((id) => id !== agentId);
  return uses ? [...others, agentId].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) : others;
};

/** Records on every linked skill's row whether `agentId` now uses it (`before` and `after`: skill ids). */
const relink = async (
  rows: RowStore,
  agentId: bigint,
  before: readonly bigint[],
  after: readonly bigint[],
) => {
  for (const skillId of new Set([...before, ...after])) {
    const row = await rows.get(skillId);
    if (!row) continue;
    const ids = row.AGENT_IDS as bigint[];
    const next = withAgent(ids, agentId, after.includes(skillId));
    if (next.length !== ids.length || next.some((id, i) => id !== ids[i]))
      rows.put({ ...row, AGENT_IDS: next });
  }
};

/** The skill ids an agent's row holds before this event (the agents table applies after this one). */
const linkedBefore = async (lookup: TableLookup, agentId: bigint) =>
  ((await lookup('agents').get(agentId))?.SKILL_IDS as bigint[] | undefined) ?? [];

/** `skills`: one row per live skill (MindsDB's information_schema.SKILLS columns first), secrets masked. */
export const skillsTable = projectResourceTable({
  table: 'skills',
  key: 'ID',
  history: true,
  columns: columns(
    NAME_AND_PROJECT,
    'TYPE VARCHAR, PARAMS JSON',
    RESOURCE_IDS,
    'AGENT_IDS BIGINT[]',
    RESOURCE_STAMPS,
  ),
  handles: [
    'SkillCreated',
    'SkillUpdated',
    'SkillDeleted',
    'AgentCreated',
    'AgentUpdated',
    'AgentDeleted',
    'SkillDetachedFromAgent',
  ],
  createdBy: {
    type: 'SkillCreated',
    cells: ({ data: d }) => ({ TYPE: d.type, PARAMS: maskSecrets(d.params), AGENT_IDS: [] }),
  },
  deletedBy: { type: 'SkillDeleted', key: (e) => BigInt(e.data.skillId) },
  apply: async (event, rows, lookup) => {
    switch (event.type) {
      case 'SkillUpdated': {
        const d = event.data;
        const cells = { NAME: d.name, TYPE: d.type, PARAMS: maskSecrets(d.params) };
        return updatedRow(rows, d.skillId, event.meta.position, d.updatedAt, cells);
      }
      case 'AgentCreated':
        await relink(
          rows,
          event.meta.position,
          [],
          event.data.skills.map((l) => BigInt(l.skillId)),
        );
        return;
      case 'AgentUpdated': {
        const agentId = BigInt(event.data.agentId);
        const after = event.data.skills.map((l) => BigInt(l.skillId));
        await relink(rows, agentId, await linkedBefore(lookup, agentId), after);
        return;
      }
      case 'AgentDeleted': {
        const agentId = BigInt(event.data.agentId);
        await relink(rows, agentId, await linkedBefore(lookup, agentId), []);
        return;
      }
      case 'SkillDetachedFromAgent':
        await relink(rows, BigInt(event.data.agentId), [BigInt(event.data.skillId)], []);
        return;
      default:
        return allHandled(event);
    }
  },
});

export type SkillRow = RowOf<typeof skillsTable.columns>;

const reads = projectResourceReads(skillsTable);
export const skillRowsOfProject = reads.ofProject;
/** One skill of a project, by id or name. */
export const skillRowByRef = reads.byRef;
/** The skills of a project with these ids (an agent's), in id order. */
export const skillRowsByIds = reads.byIds;
