import type { MlEnginesService } from './service';
import { LLM_HANDLERS } from './state';
import { quoteString } from '../shared/quoting';
import { ok, validName, type SqlCatalog, type StatementHandlers } from '../sql/handlers';

/** CREATE ML_ENGINE and DROP ML_ENGINE [FORGET], through the ML engines service (as REST). */
export const mlEngineStatements = (mlEngines: Pick<MlEnginesService, 'create' | 'remove'>) =>
  ({
    CreateMlEngine: async (statement) => {
      await mlEngines.create({
        name: validName('ML engine', statement.name),
        handler: statement.handler,
        parameters: statement.options,
        ifNotExists: statement.ifNotExists,
      });
      return ok;
    },
    DropMlEngine: async (statement) => {
      await mlEngines.remove(statement.name, statement.ifExists, { forget: statement.forget });
      return ok;
    },
  }) satisfies StatementHandlers<'CreateMlEngine' | 'DropMlEngine'>;

/** The engines this service offers, as MindsDB's information_schema.HANDLERS lists them. */
const HANDLERS = [
  ['postgres', 'data', 'PostgreSQL', 'PostgreSQL databases (driver: pg)'],
  ['mysql', 'data', 'MySQL', 'MySQL databases (driver: mysql2)'],
  ['mariadb', 'data', 'MariaDB', 'MariaDB databases (driver: mysql2)'],
  [
    'lightwood',
    'ml',
    'Lightwood',
    'Tabular models trained in process: gradient-boosted trees, linear, baseline',
  ],
  ...LLM_HANDLERS.map((h) => [h, 'ml', h, 'Language models for agents, through an OpenAI-compatible API']),
  [
    'byom',
    'ml',
    'BYOM',
    'Bring your own model: uploaded model code (PUT /api/handlers/byom/{name}), kept, not run',
  ],
];

const q = quoteString;

/** information_schema.ML_ENGINES and HANDLERS (not a project's: a scoped caller reads none). */
export const mlEngineCatalog = {
  informationSchema: {
    ML_ENGINES: `SELECT 'lightwood' AS NAME, 'lightwood' AS HANDLER, '{}' AS CONNECTION_DATA
    UNION ALL SELECT NAME, HANDLER, CAST(CONNECTION_DATA AS VARCHAR) FROM (SELECT * FROM main.ml_engines ORDER BY ID)`,
    HANDLERS: `SELECT * FROM (VALUES ${HANDLERS.map(
      ([n, t, title, d]) => `(${q(n!)}, ${q(t!)}, ${q(title!)}, ${q(d!)}, '1', '{}', true, NULL::VARCHAR)`,
    ).join(
      ', ',
    )}) AS h(NAME, TYPE, TITLE, DESCRIPTION, VERSION, CONNECTION_ARGS, IMPORT_SUCCESS, IMPORT_ERROR)`,
  },
} satisfies SqlCatalog;
