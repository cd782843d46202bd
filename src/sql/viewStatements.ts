import type { OkAnswer } from './answers';
import type { MindsStatement } from './parse';
import type { SqlPorts } from './ports';

export type ViewStatement = Extract<MindsStatement, { kind: 'CreateView' | 'AlterView' | 'DropView' }>;

const ok: OkAnswer = { type: 'ok', affected_rows: null };

/** CREATE [OR REPLACE] VIEW, ALTER VIEW and DROP VIEW, through the views service (as REST). */
export const viewStatementsOf = (services: Pick<SqlPorts, 'views'>) => ({
  run: async (statement: ViewStatement, db: string): Promise<OkAnswer> => {
    const project = statement.name.project ?? db;
    switch (statement.kind) {
      case 'CreateView':
        await services.views.create(project, {
          name: statement.name.name,
          query: statement.query,
          replace: statement.replace,
          ifNotExists: statement.ifNotExists,
        });
        return ok;
      case 'AlterView':
        await services.views.update(project, statement.name.name, { query: statement.query });
        return ok;
      case 'DropView':
        await services.views.remove(project, statement.name.name, statement.ifExists);
        return ok;
      default: {
        const _exhaustive: never = statement;
        return _exhaustive;
      }
    }
  },
});
