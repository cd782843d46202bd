import type { AppContext } from '../context';
import { streamCommand } from '../projectCommand';
import type { Unstamped } from '../shared/params';
import { decideMlEngine, type ByomUpload, type MlEngineCommand } from './decider';
import { mlEngineAggregate, mlEngineStream } from './state';

/**
 * ML engines: named handlers with settings (an LLM provider's key and base URL, …), global like
 * MindsDB's. Written through each engine's stream; agents read an engine's real settings from the
 * log (`settingsOf`), every other reader sees them masked.
 */
export const mlEnginesService = (ctx: AppContext) => {
  const run = (command: Unstamped<MlEngineCommand>) =>
    streamCommand(ctx, {
      stream: mlEngineStream(command.data.name),
      aggregate: mlEngineAggregate,
      command,
      decide: decideMlEngine,
      answer: 'settled',
    });
  return {
    create: async (input: {
      name: string;
      handler: string;
      parameters: Record<string, unknown>;
      ifNotExists: boolean;
    }) => {
      await run({ type: 'CreateMlEngine', data: input });
    },
    /** `forget`: its secrets (API keys in its parameters) are forgotten too (crypto-shredding). */
    remove: async (name: string, ifExists: boolean, options: { forget?: boolean } = {}) => {
      await run({ type: 'DeleteMlEngine', data: { name, ifExists } });
      if (options.forget)
        await ctx.secrets.forget(
          { stream: mlEngineStream(name), eventType: 'MlEngineCreated', name },
          `ML engine ${name} deleted with forget`,
        );
    },
    /** `PUT /api/handlers/byom/{name}`: a BYOM engine made from uploaded code. */
    createByom: async (name: string, byom: ByomUpload) => {
      await run({
        type: 'CreateMlEngine',
        data: { name, handler: 'byom', parameters: {}, ifNotExists: false, byom },
      });
    },
    /** `POST /api/handlers/byom/{name}`: a new version of its code; answers every version's number. */
    updateByom: async (name: string, byom: ByomUpload) => {
      const { state } = await run({ type: 'UpdateByomEngine', data: { name, byom } });
      const versions = state.status === 'live' ? state.byomVersions : 0;
      return {
        last_engine_version: versions,
        engine_versions: Array.from({ length: versions }, (_, i) => i + 1),
      };
    },
    /** An engine's handler and real parameters (secrets included), from its stream: for the code that uses them. */
    settingsOf: async (name: string) => {
      const { state } = await ctx.commands.load(mlEngineStream(name), mlEngineAggregate);
      return state.status === 'live'
        ? { name: state.name, handler: state.handler, params: state.parameters }
        : undefined;
    },
  };
};

export type MlEnginesService = ReturnType<typeof mlEnginesService>;
