import type { TableFace } from '../face';

/** An agent queried as a table: its answers, one run per question. Listed before models: an agent's name wins, as in MindsDB. */
export const agentFace: TableFace = {
  kind: 'agent',
  recognise: async ({ node, catalog: catalogName, table, database }, { catalog }) => {
    const agent = catalogName ? undefined : await catalog.agent(database, table);
    return (
      agent && { place: 'computed', ref: { node, project: agent.project, name: agent.agent, kind: 'agent' } }
    );
  },
};
