import type { MlEngineCreated, MlEngineDeleted } from '../../events';
import { conflict, invalid, notFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import { BUILT_IN_ENGINES, ML_HANDLERS, type MlEngineState } from './state';

type Now = { now: Date };
export type MlEngineCommand =
  | {
      type: 'CreateMlEngine';
      data: { name: string; handler: string; parameters: Record<string, unknown>; ifNotExists: boolean };
      metadata: Now;
    }
  | { type: 'DeleteMlEngine'; data: { name: string; ifExists: boolean }; metadata: Now };

const isBuiltIn = (name: string) => BUILT_IN_ENGINES.some((e) => e.name === nameKey(name));

export const decideMlEngine = (
  command: MlEngineCommand,
  state: MlEngineState,
): (MlEngineCreated | MlEngineDeleted)[] => {
  const at = command.metadata.now.toISOString();
  switch (command.type) {
    case 'CreateMlEngine': {
      const d = command.data;
      if (state.status === 'live' || isBuiltIn(d.name)) {
        if (d.ifNotExists) return [];
        throw conflict(`ML engine with name ${d.name} already exists`, 'ML engine already exists');
      }
      const handler = d.handler.toLowerCase();
      if (!ML_HANDLERS.includes(handler))
        throw invalid(
          `Handler ${d.handler} is not available; ML handlers: ${ML_HANDLERS.join(', ')}`,
          'Unknown ML handler',
        );
      return [
        { type: 'MlEngineCreated', data: { name: d.name, handler, parameters: d.parameters, createdAt: at } },
      ];
    }
    case 'DeleteMlEngine': {
      if (isBuiltIn(command.data.name))
        throw invalid(
          `${command.data.name} is a built-in ML engine and cannot be dropped`,
          'Cannot drop ML engine',
        );
      if (state.status !== 'live') {
        if (command.data.ifExists) return [];
        throw notFound(`ML engine with name ${command.data.name} does not exist`, 'ML engine not found');
      }
      return [
        { type: 'MlEngineDeleted', data: { engineId: Number(state.id), name: state.name, deletedAt: at } },
      ];
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
};
