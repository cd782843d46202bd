import type { MlEnginesService } from './service';
import { ok, validName, type StatementHandlers } from '../sql/handlers';

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
