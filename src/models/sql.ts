import type { ModelsService } from './service';
import { modelTable, type ModelView } from './present';
import { invalid } from '../shared/errors';
import { nameKey } from '../shared/names';
import { SqlError, SqlErrorCode } from '../sql/errors';
import { trimStatement } from '../sql/lexical';
import {
  isSyntaxProblem,
  parseMindsStatement,
  type MindsStatement,
  type TimeSeriesClauses,
} from '../sql/parse';
import {
  ownProject,
  ok,
  projectOf,
  type SqlCatalog,
  type SqlLookups,
  type StatementHandlers,
} from '../sql/handlers';

export type ModelSqlPorts = {
  readonly models: Pick<ModelsService, 'exists' | 'create' | 'retrain' | 'finetune' | 'remove'>;
  readonly databaseExists: (name: string) => Promise<boolean>;
  /** MindsDB drops a view with DROP MODEL too (its JS SDK's deleteView sends that). */
  readonly views: {
    readonly queryOf: (project: string, name: string) => Promise<string | undefined>;
    readonly remove: (project: string, name: string) => Promise<unknown>;
  };
};

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

const unknownDatabase = (name: string) =>
  new SqlError(SqlErrorCode.UnknownDatabase, `Database ${name} does not exist`);

/** The training query runs in `FROM db` (a file, a project, or an external database). */
const createModel =
  ({ models, databaseExists }: ModelSqlPorts) =>
  async (project: string, s: Extract<MindsStatement, { kind: 'CreateModel' }>): Promise<ModelView> => {
    // Without FROM: an LLM model (the service refuses it for an engine that learns from rows).
    if (s.from && !(await databaseExists(s.from.database))) throw unknownDatabase(s.from.database);
    const timeseries = timeseriesOf(`CREATE MODEL ${s.name.name}`, s.timeseries);
    return models.create(project, {
      name: s.name.name,
      replace: s.replace,
      ifNotExists: s.ifNotExists,
      target: s.target,
      query: s.from?.query ?? '',
      sourceDatabase: s.from?.database ?? '',
      options: s.options,
      timeseries,
    });
  };

/** CREATE MODEL, RETRAIN, FINETUNE and DROP MODEL, through the models service (as REST). */
export const modelStatements = (ports: ModelSqlPorts) => {
  const { models } = ports;
  const create = createModel(ports);
  return {
    CreateModel: async (statement, context) => {
      const project = projectOf(statement.name, context);
      const created = await create(project, statement);
      return { type: 'table', column_types: [], ...modelTable(created, project) };
    },
    RetrainModel: async (statement, context) => {
      const project = projectOf(statement.name, context);
      const retrained = await models.retrain(project, statement.name.name, {
        ...(statement.from ? { query: statement.from.query, sourceDatabase: statement.from.database } : {}),
        ...(statement.target ? { target: statement.target } : {}),
        ...(statement.timeseries
          ? { timeseries: timeseriesOf(`RETRAIN ${statement.name.name}`, statement.timeseries) }
          : {}),
        options: statement.options,
      });
      return { type: 'table', column_types: [], ...modelTable(retrained, project) };
    },
    FinetuneModel: async (statement, context) => {
      const { project, ref } = modelReference(statement.name, context.db);
      if (!(await ports.databaseExists(statement.from.database)))
        throw unknownDatabase(statement.from.database);
      const tuned = await models.finetune(project, ref, {
        query: statement.from.query,
        sourceDatabase: statement.from.database,
        options: statement.options,
      });
      return { type: 'table', column_types: [], ...modelTable(tuned, project) };
    },
    DropModel: async (statement, context) => {
      const { project, ref } = modelReference(statement.name, context.db);
      if (
        statement.name.length <= 2 &&
        !(await models.exists(project, ref)) &&
        (await ports.views.queryOf(project, ref)) !== undefined
      ) {
        await ports.views.remove(project, ref);
        return ok;
      }
      if (statement.ifExists && !(await models.exists(project, ref))) return ok;
      await models.remove(project, ref);
      return ok;
    },
  } satisfies StatementHandlers<'CreateModel' | 'RetrainModel' | 'FinetuneModel' | 'DropModel'>;
};

/** `POST /api/projects/{p}/models`: the body's statement must be a CREATE MODEL (MindsDB's checks, in order). */
export const createModelFromText =
  (ports: ModelSqlPorts) =>
  async (project: string, query: string): Promise<ModelView> => {
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
      return await createModel(ports)(project, parsed);
    } catch (error) {
      if (error instanceof SqlError) throw invalid(error.message);
      throw error;
    }
  };

/** information_schema.MODELS and MODELS_VERSIONS, and every project's models and models_versions. */
export const modelCatalog = {
  informationSchema: {
    MODELS: `SELECT NAME, ENGINE, PROJECT, ACTIVE, VERSION, STATUS, ACCURACY, PREDICT, UPDATE_STATUS, MINDSDB_VERSION,
      ERROR, SELECT_DATA_QUERY, CAST(TRAINING_OPTIONS AS VARCHAR) AS TRAINING_OPTIONS, CURRENT_TRAINING_PHASE,
      TOTAL_TRAINING_PHASES, TRAINING_PHASE_NAME, TAG, CREATED_AT, TRAINING_TIME,
      TRAINING_PROGRESS AS PROGRESS FROM main.models ORDER BY ID, VERSION`,
    // MindsDB's every version of every model (the JS SDK's getModel(name, project, version) reads it);
    // MODELS lists every version too, as MindsDB's does since the two were merged.
    MODELS_VERSIONS: `SELECT NAME, ENGINE, PROJECT, ACTIVE, VERSION, STATUS, ACCURACY, PREDICT, UPDATE_STATUS,
      MINDSDB_VERSION, ERROR, SELECT_DATA_QUERY, CAST(TRAINING_OPTIONS AS VARCHAR) AS TRAINING_OPTIONS, TAG,
      CREATED_AT, TRAINING_TIME FROM main.models ORDER BY ID, VERSION`,
  },
  projectTables: { models: 'MODELS', models_versions: 'MODELS_VERSIONS' },
  scopedRows: { models: ownProject },
  // Each version's training (state.ts `modelTrainingStream`).
  projectStreams: (ofProject) =>
    `stream IN (SELECT 'model-training-' || VERSION_POSITION FROM main.models WHERE ${ofProject})`,
} satisfies SqlCatalog;

/** A model queried as a table predicts. */
export const modelLookup = (models: Pick<ModelsService, 'exists'>) =>
  ({
    isModel: (project, name) => models.exists(project, name),
  }) satisfies Pick<SqlLookups, 'isModel'>;
