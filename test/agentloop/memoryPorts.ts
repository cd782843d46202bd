import {
  ToolError,
  type KbHit,
  type KnowledgeBaseSearchPort,
  type QueryRows,
  type SqlScope,
  type SqlToolPort,
  type TableColumn,
} from '../../src/engines/agentLoop';

export type MemoryTable = {
  readonly columns: readonly TableColumn[];
  readonly rows: readonly Record<string, unknown>[];
};

/**
 * A SqlToolPort over a few in-memory tables: the agent loop's contract with the SQL engine,
 * without the engine. It refuses anything but SELECT (as the lead's guard will, on the parse tree),
 * answers scripted SELECTs, and records every call.
 */
export const memorySqlPort = (
  tables: Readonly<Record<string, MemoryTable>>,
  answers: Readonly<Record<string, QueryRows>>,
) => {
  const calls: { op: 'listTables' | 'describe' | 'query'; scope: SqlScope; arg?: unknown; limit?: number }[] =
    [];
  const normalise = (sql: string) => sql.replace(/\s+/g, ' ').replace(/;$/, '').trim().toLowerCase();
  const port: SqlToolPort = {
    listTables: async (scope) => {
      calls.push({ op: 'listTables', scope });
      return Object.keys(tables).map((t) => (scope.database ? `${scope.database}.${t}` : t));
    },
    describe: async (scope, names, { sampleRows }) => {
      calls.push({ op: 'describe', scope, arg: names });
      return names.map((name) => {
        const table = tables[name.split('.').pop() ?? name];
        if (!table) throw new ToolError(`table ${name} does not exist`);
        return { name, columns: table.columns, sampleRows: table.rows.slice(0, sampleRows) };
      });
    },
    query: async (scope, sql, { limit }) => {
      calls.push({ op: 'query', scope, arg: sql, limit });
      if (!/^\s*select\b/i.test(sql))
        throw new ToolError('only read-only statements (SELECT, SHOW, DESCRIBE) are allowed', {
          rejected: true,
        });
      const answer = answers[normalise(sql)];
      if (!answer) throw new ToolError(`query failed: no such column or table in: ${sql}`);
      return answer;
    },
  };
  return { port, calls };
};

export const memoryKbPort = (docs: Readonly<Record<string, readonly KbHit[]>>) => {
  const calls: { kb: string; query: string; limit: number }[] = [];
  const port: KnowledgeBaseSearchPort = {
    search: async (kb, query, { limit }) => {
      calls.push({ kb, query, limit });
      return (docs[kb] ?? []).slice(0, limit);
    },
  };
  return { port, calls };
};

export const ordersTable: MemoryTable = {
  columns: [
    { name: 'id', type: 'INTEGER' },
    { name: 'customer', type: 'VARCHAR' },
    { name: 'amount', type: 'DOUBLE' },
  ],
  rows: [
    { id: 1, customer: 'alice', amount: 10.5 },
    { id: 2, customer: 'bob', amount: 20 },
    { id: 3, customer: 'alice', amount: 7.25 },
    { id: 4, customer: 'carol', amount: 1 },
  ],
};
