import { settled, type AppContext } from '../context';
import type { Unstamped } from '../shared/params';
import { decideMlEngine, type MlEngineCommand } from './decider';
import { mlEngineRowByName } from './projection';
import { BUILT_IN_ENGINES, mlEngineAggregate, mlEngineStream } from './state';

/**
 * ML engines: named handlers with settings (an LLM provider's key and base URL, …), global like
 * MindsDB's. Written through each engine's stream; agents read an engine's real settings from the
 * log (`settingsOf`), every other reader sees them masked.
 */
export const mlEnginesService = (ctx: AppContext) => {
  const run = async (unstamped: Unstamped<MlEngineCommand>) => {
    const command = { ...unstamped, metadata: { now: ctx.clock() } } as MlEngineCommand;
    const outcome = await ctx.commands.run(mlEngineStream(command.data.name), mlEngineAggregate, (s) =>
      decideMlEngine(command, s),
    );
    await settled(ctx, outcome.lastPosition);
  };
  return {
    create: (input: {
      name: string;
      handler: string;
      parameters: Record<string, unknown>;
      ifNotExists: boolean;
    }) => run({ type: 'CreateMlEngine', data: input }),
    remove: (name: string, ifExists: boolean) => run({ type: 'DeleteMlEngine', data: { name, ifExists } }),
    /** Whether an engine of this name exists (built in, or made with CREATE ML_ENGINE). */
    exists: async (name: string) =>
      BUILT_IN_ENGINES.some((e) => e.name === name.toLowerCase()) ||
      (await ctx.cached(`ml-engine:${name.toLowerCase()}`, () => mlEngineRowByName(ctx.duck, name))) !==
        undefined,
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
