import type { AppContext } from '../context';
import { decideWrite, type RecordWrite } from './decider';
import { integrationWritesAggregate, integrationWritesStream } from './state';

/** Records writes made into external databases (after they committed there). */
export const integrationWritesService = (ctx: AppContext) => ({
  record: async (write: RecordWrite['data']) => {
    const command: RecordWrite = { type: 'RecordWrite', data: write, metadata: { now: ctx.clock() } };
    const outcome = await ctx.commands.run(
      integrationWritesStream(write.database),
      integrationWritesAggregate,
      (s) => decideWrite(command, s),
    );
    return outcome.lastPosition;
  },
});

export type IntegrationWritesService = ReturnType<typeof integrationWritesService>;
