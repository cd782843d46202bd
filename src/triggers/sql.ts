import type { TriggersService } from './service';
import {
  byName,
  dropByName,
  ownProject,
  projectOf,
  type SqlCatalog,
  type StatementHandlers,
} from '../sql/handlers';

/** CREATE TRIGGER and DROP TRIGGER [FORGET], through the triggers service (as REST). */
export const triggerStatements = (triggers: Pick<TriggersService, 'create' | 'remove'>) =>
  ({
    CreateTrigger: byName((project, name, statement, context) =>
      triggers.create(project, {
        name,
        database: projectOf(statement.target, context),
        table: statement.target.name,
        columns: statement.columns,
        query: statement.query,
      }),
    ),
    DropTrigger: dropByName(triggers.remove),
  }) satisfies StatementHandlers<'CreateTrigger' | 'DropTrigger'>;

/** information_schema.TRIGGERS. */
export const triggerCatalog = {
  informationSchema: {
    TRIGGERS: `SELECT NAME, PROJECT, DATABASE, "TABLE", QUERY, LAST_ERROR FROM main.triggers ORDER BY ID`,
  },
  scopedRows: { triggers: ownProject },
  // Each trigger's firings (state.ts `triggerFiringsStream`).
  projectStreams: (ofProject) =>
    `stream IN (SELECT 'trigger-firings-' || ID FROM main.triggers WHERE ${ofProject})`,
} satisfies SqlCatalog;
