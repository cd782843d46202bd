import type { RecordedEvent } from '../events';
import { answeredAhead, settled, type AppContext } from './context';
import type { NewEvent } from './eventlog/types';
import { projectAggregate, type ProjectAggregate } from './projects/aggregate';
import type { ProjectDirectory } from './projects/directory';
import { projectStream } from './projects/state';
import type { Unstamped } from './shared/params';

/**
 * When a write answers (src/context.ts): `ahead`, once the log has its events (this process's later
 * reads wait for them instead), for an answer made from the command's own state; `settled`, once
 * this process's read model has applied them, for an answer read from the tables or a call that
 * reads them after its write.
 */
export type WriteAnswer = 'ahead' | 'settled';

/** A command on a project's stream, as a service gives it: without its time. */
export type ProjectCommandRun<C> = {
  /** The project's name. */
  readonly project: string;
  /**
   * When given, the project is found through it first (404 when it does not exist) and its stream
   * named as the directory spells it; otherwise the stream is named from `project` as given.
   */
  readonly projects?: ProjectDirectory;
  readonly command: Unstamped<C>;
  readonly decide: (command: C, state: ProjectAggregate) => readonly NewEvent[];
  readonly answer: WriteAnswer;
  /** The command's time when the caller has read the clock already (and used it); else read here. */
  readonly now?: Date;
};

/** What a command on a project's stream did. */
export type ProjectCommandResult = {
  /** The project's name, as its stream was named. */
  readonly project: string;
  /** The project's state after the command's events. */
  readonly state: ProjectAggregate;
  /** What was appended (empty when the decider decided nothing needed to change). */
  readonly events: readonly RecordedEvent[];
  /** Global position of the last appended event; null if none. */
  readonly lastPosition: bigint | null;
};

/**
 * Runs a command on a project's stream: stamps it with the clock, finds the project (with
 * `projects`), decides and appends it (src/eventlog/commands.ts), then answers `ahead` or
 * `settled` (src/context.ts).
 */
export const projectCommand = async <C extends { readonly metadata: { readonly now: Date } }>(
  ctx: AppContext,
  run: ProjectCommandRun<C>,
): Promise<ProjectCommandResult> => {
  // The command as given, with its time: what it was before `Unstamped` took the time off.
  const command = { ...run.command, metadata: { now: run.now ?? ctx.clock() } } as unknown as C;
  const project = run.projects ? (await run.projects.require(run.project)).name : run.project;
  const outcome = await ctx.commands.run(projectStream(project), projectAggregate, (s) =>
    run.decide(command, s),
  );
  if (run.answer === 'ahead') answeredAhead(ctx, outcome.events);
  else await settled(ctx, outcome.lastPosition);
  return { project, state: outcome.state, events: outcome.events, lastPosition: outcome.lastPosition };
};
