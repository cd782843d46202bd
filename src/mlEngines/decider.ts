import type { MlEngineCreated, MlEngineDeleted, MlEngineUpdated } from '../../events';
import { conflict, invalid, notFound } from '../shared/errors';
import { nameKey } from '../shared/names';
import { decideByType, type Now } from '../shared/decision';
import { BUILT_IN_ENGINES, BYOM_HANDLER, ML_HANDLERS, type MlEngineState } from './state';

/** A BYOM upload: the code's and requirements' file names and contents, and how it runs (`type`). */
export type ByomUpload = {
  type: string;
  code: { fileName: string; content: string };
  modules: { fileName: string; content: string };
};
export type MlEngineCommand =
  | {
      type: 'CreateMlEngine';
      data: {
        name: string;
        handler: string;
        parameters: Record<string, unknown>;
        ifNotExists: boolean;
        byom?: ByomUpload;
      };
      metadata: Now;
    }
  | { type: 'UpdateByomEngine'; data: { name: string; byom: ByomUpload }; metadata: Now }
  | { type: 'DeleteMlEngine'; data: { name: string; ifExists: boolean }; metadata: Now };

const isBuiltIn = (name: string) => BUILT_IN_ENGINES.some((e) => e.name === nameKey(name));

/** MindsDB's connection arguments of a BYOM engine: the files' names and the type. */
const byomParameters = (u: ByomUpload) => ({
  code: u.code.fileName,
  modules: u.modules.fileName,
  type: u.type,
});
const byomSources = (u: ByomUpload) => ({ code: u.code.content, modules: u.modules.content });

type Command<T extends MlEngineCommand['type']> = Extract<MlEngineCommand, { type: T }>;

/** A BYOM engine is made from uploaded code, never from connection parameters. */
const byomCreated = (d: Command<'CreateMlEngine'>['data'], at: string): MlEngineCreated[] => {
  if (!d.byom)
    throw invalid(
      `A BYOM engine is made by uploading its code: PUT /api/handlers/byom/${d.name} (multipart fields code, modules, type)`,
      'Missing BYOM code',
    );
  return [
    {
      type: 'MlEngineCreated',
      data: {
        name: d.name,
        handler: BYOM_HANDLER,
        parameters: byomParameters(d.byom),
        byom: byomSources(d.byom),
        createdAt: at,
      },
    },
  ];
};

const createMlEngine = (command: Command<'CreateMlEngine'>, state: MlEngineState): MlEngineCreated[] => {
  const at = command.metadata.now.toISOString();
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
  if (handler === BYOM_HANDLER) return byomCreated(d, at);
  return [
    { type: 'MlEngineCreated', data: { name: d.name, handler, parameters: d.parameters, createdAt: at } },
  ];
};

const updateByomEngine = (command: Command<'UpdateByomEngine'>, state: MlEngineState): MlEngineUpdated[] => {
  const at = command.metadata.now.toISOString();
  const d = command.data;
  if (state.status !== 'live')
    throw notFound(`ML engine with name ${d.name} does not exist`, 'ML engine not found');
  if (state.handler !== BYOM_HANDLER)
    throw invalid(
      `ML engine ${state.name} is made from ${state.handler}, not byom: only BYOM engines take new code`,
      'Not a BYOM engine',
    );
  return [
    {
      type: 'MlEngineUpdated',
      data: {
        engineId: Number(state.id),
        name: state.name,
        parameters: byomParameters(d.byom),
        byom: byomSources(d.byom),
        version: state.byomVersions + 1,
        updatedAt: at,
      },
    },
  ];
};

const deleteMlEngine = (command: Command<'DeleteMlEngine'>, state: MlEngineState): MlEngineDeleted[] => {
  const at = command.metadata.now.toISOString();
  if (isBuiltIn(command.data.name))
    throw invalid(
      `${command.data.name} is a built-in ML engine and cannot be dropped`,
      'Cannot drop ML engine',
    );
  if (state.status !== 'live') {
    if (command.data.ifExists) return [];
    throw notFound(`ML engine with name ${command.data.name} does not exist`, 'ML engine not found');
  }
  return [{ type: 'MlEngineDeleted', data: { engineId: Number(state.id), name: state.name, deletedAt: at } }];
};

export const decideMlEngine = decideByType<
  MlEngineCommand,
  MlEngineState,
  MlEngineCreated | MlEngineUpdated | MlEngineDeleted
>({ CreateMlEngine: createMlEngine, UpdateByomEngine: updateByomEngine, DeleteMlEngine: deleteMlEngine });
