import type { Logger } from 'pino';
import type { Config } from './config';
import type { Duck } from './duckdb/database';
import type { CommandRunner } from './eventlog/commands';
import type { EventLog } from './eventlog/types';
import type { ProjectionRunner } from './projection/runner';
import type { ReadCache } from './shared/readCache';
import type { Clock } from './shared/time';

/** What every capability's service is built from: injected, so tests can assemble their own. */
export type AppContext = {
  readonly config: Config;
  readonly log: EventLog;
  readonly duck: Duck;
  readonly projections: ProjectionRunner;
  readonly commands: CommandRunner;
  readonly cached: ReadCache;
  readonly clock: Clock;
  readonly logger: Logger;
};

/** Waits until this process's read model includes a command's events (read-your-writes). */
export const settled = async (ctx: AppContext, lastPosition: bigint | null) => {
  if (lastPosition !== null) await ctx.projections.waitFor(lastPosition);
};
