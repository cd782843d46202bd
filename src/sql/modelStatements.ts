import { modelTable, type ModelView } from '../models/present';
import { invalid } from '../shared/errors';
import { nameKey } from '../shared/names';
import type { OkAnswer, TableAnswer } from './answers';
import { SqlError, SqlErrorCode } from './errors';
import { trimStatement } from './lexical';
import { isSyntaxProblem, parseMindsStatement, type MindsStatement, type TimeSeriesClauses } from './parse';
import type { SqlPorts } from './ports';

type ModelStatement = Extract<
  MindsStatement,
  { kind: 'CreateModel' | 'RetrainModel' | 'FinetuneModel' | 'DropModel' }
>;

/** `[project.]model[.version]`: the project (the current one when unnamed) and the model reference. */
const modelReference = (parts: string[], db: string) => {
  const [a, b, c] = parts;
  const qualified = b !== undefined && !/^\d+$/.test(b);
  return {
    project: qualified ? a! : db,
    ref: qualified ? [b, c].filter(Boolean).join('.') : parts.join('.'),
  };
};

/** Time-series clauses name ORDER BY; alone, GROUP BY, WINDOW and HORIZON are refused. */
const timeseriesOf = (statement: string, ts: TimeSeriesClauses | null) => {
  if (ts && ts.orderBy === null)
    throw invalid(
      `${statement}: GROUP BY, WINDOW and HORIZON make a time-series model, which needs ORDER BY <column>`,
      'Invalid model definition',
    );
  return ts && ts.orderBy !== null ? { ...ts, orderBy: ts.orderBy } : null;
};

/** CREATE MODEL, RETRAIN, FINETUNE and DROP MODEL, in SQL and (CREATE) through `POST …/models`. */
export const modelStatementsOf = (services: Pick<SqlPorts, 'databases' | 'models'>) => {
  const { models } = services;

  /** The training query runs in `FROM db` (a file, a project, or an external database). */
  const create = async (
    project: string,
    s: Extract<MindsStatement, { kind: 'CreateModel' }>,
  ): Promise<ModelView> => {
    if (!s.from) throw invalid('CREATE MODEL needs FROM <database> (SELECT …): this engine learns from rows');
    if (!(await services.databases.exists(s.from.database)))
      throw new SqlError(SqlErrorCode.UnknownDatabase, `Database ${s.from.database} does not exist`);
    const timeseries = timeseriesOf(`CREATE MODEL ${s.name.name}`, s.timeseries);
    return models.create(project, {
      name: s.name.name,
      replace: s.replace,
      ifNotExists: s.ifNotExists,
      target: s.target,
      query: s.from.query,
      sourceDatabase: s.from.database,
      options: s.options,
      timeseries,
    });
  };

  return {
    run: async (statement: ModelStatement, db: string): Promise<TableAnswer | OkAnswer> => {
      switch (statement.kind) {
        case 'CreateModel': {
          const project = statement.name.project ?? db;
          const created = await create(project, statement);
          return { type: 'table', column_types: [], ...modelTable(created, project) };
        }
        case 'RetrainModel': {
          const project = statement.name.project ?? db;
          const retrained = await models.retrain(project, statement.name.name, {
            ...(statement.from
              ? { query: statement.from.query, sourceDatabase: statement.from.database }
              : {}),
            ...(statement.target ? { target: statement.target } : {}),
            ...(statement.timeseries
              ? { timeseries: timeseriesOf(`RETRAIN ${statement.name.name}`, statement.timeseries) }
              : {}),
            options: statement.options,
          });
          return { type: 'table', column_types: [], ...modelTable(retrained, project) };
        }
        case 'FinetuneModel': {
          const { project, ref } = modelReference(statement.name, db);
          if (!(await services.databases.exists(statement.from.database)))
            throw new SqlError(
              SqlErrorCode.UnknownDatabase,
              `Database ${statement.from.database} does not exist`,
            );
          const tuned = await models.finetune(project, ref, {
            query: statement.from.query,
            sourceDatabase: statement.from.database,
            options: statement.options,
          });
          return { type: 'table', column_types: [], ...modelTable(tuned, project) };
        }
        case 'DropModel': {
          const { project, ref } = modelReference(statement.name, db);
          if (statement.ifExists && !(await models.exists(project, ref)))
            return { type: 'ok', affected_rows: null };
          await models.remove(project, ref);
          return { type: 'ok', affected_rows: null };
        }
      }
    },

    /** `POST /api/projects/{p}/models`: the body's statement must be a CREATE MODEL (MindsDB's checks, in order). */
    createFromRest: async (project: string, query: string): Promise<ModelView> => {
      const parsed = parseMindsStatement(trimStatement(query));
      if (isSyntaxProblem(parsed)) {
        if (/^\s*CREATE\s+(OR\s+REPLACE\s+)?(MODEL|PREDICTOR)\b/i.test(query))
          throw invalid(
            `SQL CREATE statement is invalid: ${query} (${parsed.message})`,
            'Invalid query string',
          );
        throw invalid(`Not a CREATE MODEL statement: ${query}`, 'Invalid CREATE SQL statement');
      }
      if (parsed.kind !== 'CreateModel')
        throw invalid(`Not a CREATE MODEL statement: ${query}`, 'Invalid CREATE SQL statement');
      if (parsed.name.project && nameKey(parsed.name.project) !== nameKey(project))
        throw invalid(`The statement names project ${parsed.name.project}, the URL ${project}`);
      try {
        return await create(project, parsed);
      } catch (error) {
        if (error instanceof SqlError) throw invalid(error.message);
        throw error;
      }
    },
  };
};
