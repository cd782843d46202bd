import { knowledgeBaseDefinition } from '../knowledgeBases/schemas';
import { quoteMysqlIdent } from '../shared/quoting';
import type { OkAnswer } from './answers';
import { SqlError, SqlErrorCode } from './errors';
import type { MindsStatement, QualifiedName } from './parse';
import type { SqlPorts } from './ports';

export type KnowledgeBaseStatement = Extract<
  MindsStatement,
  { kind: 'CreateKnowledgeBase' | 'DropKnowledgeBase' | 'Insert' | 'Delete' }
>;

const refused = (verb: string, target: QualifiedName) =>
  new SqlError(
    SqlErrorCode.Forbidden,
    `${verb} ${target.project ? `${target.project}.` : ''}${target.name} is not allowed: only knowledge bases take rows; the other tables are projections of the event log and change only through commands`,
  );

/** `INSERT … VALUES` as a query: the rows a knowledge base takes, named by the column list. */
const rowsQuery = (columns: string[] | null, body: string) => {
  const named = columns
    ? ` AS mindledger_rows(${columns.map(quoteMysqlIdent).join(', ')})`
    : ' AS mindledger_rows';
  if (/^values\b/i.test(body)) {
    if (!columns)
      throw new SqlError(
        SqlErrorCode.Invalid,
        'INSERT … VALUES needs its column list: INSERT INTO kb (id, content) VALUES …',
      );
    return `SELECT * FROM (${body})${named}`;
  }
  return columns ? `SELECT * FROM (${body})${named}` : body;
};

/**
 * CREATE / DROP KNOWLEDGE_BASE, and the two writes a knowledge base takes: INSERT (its rows become
 * documents) and DELETE (the documents whose chunks match the condition). Any other INSERT or DELETE
 * is refused: the read model changes only through commands.
 */
export const knowledgeBaseStatementsOf = (services: Pick<SqlPorts, 'knowledgeBases'>) => {
  const kbs = services.knowledgeBases;
  return {
    run: async (statement: KnowledgeBaseStatement, db: string): Promise<OkAnswer> => {
      switch (statement.kind) {
        case 'CreateKnowledgeBase': {
          const project = statement.name.project ?? db;
          const definition = knowledgeBaseDefinition(statement.name.name, statement.options);
          if (statement.replace) await kbs.remove(project, definition.name, true);
          await kbs.create(project, { ...definition, ifNotExists: statement.ifNotExists });
          if (statement.from) {
            const done = await kbs.insertQuery(project, definition.name, db, statement.from);
            return { type: 'ok', affected_rows: done.documents };
          }
          return { type: 'ok', affected_rows: null };
        }
        case 'DropKnowledgeBase':
          await kbs.remove(statement.name.project ?? db, statement.name.name, statement.ifExists, {
            forget: statement.forget,
          });
          return { type: 'ok', affected_rows: null };
        case 'Insert': {
          const project = statement.target.project ?? db;
          const kb = await kbs.exists(project, statement.target.name);
          if (!kb) throw refused('INSERT INTO', statement.target);
          const done = await kbs.insertQuery(
            kb.project,
            kb.name,
            db,
            rowsQuery(statement.columns, statement.body),
          );
          return { type: 'ok', affected_rows: done.documents };
        }
        case 'Delete': {
          const project = statement.target.project ?? db;
          const kb = await kbs.exists(project, statement.target.name);
          if (!kb) throw refused('DELETE FROM', statement.target);
          const deleted = await kbs.deleteWhere(kb.project, kb.name, db, statement.where);
          return { type: 'ok', affected_rows: deleted };
        }
      }
    },
  };
};
