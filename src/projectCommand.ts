import type { RecordedEvent } from '../events';
import { answeredAhead, settled, type AppContext } from './context';
import type { Aggregate } from './eventlog/commands';
import type { NewEvent } from './eventlog/types';
import { forgetDeleted } from './ledger/secretKeeper';
import type { ProjectAggregate } from './shared/projectState';
import type { ProjectDirectory } from './shared/projectDirectory';
import { projectStream } from './shared/projectState';

/**
 * When a write answers (src/context.ts): `ahead`, once the log has its events (this process's later
 * reads wait for them instead), for an answer made from the command's own state; `settled`, once
 * this process's read model has applied them, for an answer read from the tables or a call that
 * reads them after its write.
 */
type WriteAnswer = 'ahead' | 'settled';

/** A command with its time, as its decider is given it: the service stamps it from the clock. */
export type Stamped<U> = U & { readonly metadata: { readonly now: Date } };

/** A command on one stream, as a service gives it: without its time. */
type StreamCommandRun<U, S> = {
  readonly stream: string;
  readonly aggregate: Aggregate<S>;
  readonly command: U;
  readonly decide: (command: Stamped<U>, state: S) => readonly NewEvent[];
  /** `caller`: the caller waits itself, for this command's events and more it appends after. */
  readonly answer: WriteAnswer | 'caller';
  /** The command's time when the caller has read the clock already (and used it); else read here. */
  readonly now?: Date;
};

/**
 * Runs a command on a stream: stamps it with the clock, decides and appends it
 * (src/eventlog/commands.ts), then answers `ahead` or `settled` (src/context.ts).
 */
export const streamCommand = async <U extends object, S>(ctx: AppContext, run: StreamCommandRun<U, S>) => {
  const command: Stamped<U> = { ...run.command, metadata: { now: run.now ?? ctx.clock() } };
  const outcome = await ctx.commands.run(run.stream, run.aggregate, (s) => run.decide(command, s));
  if (run.answer === 'ahead') answeredAhead(ctx, outcome.events);
  else if (run.answer === 'settled') await settled(ctx, outcome.lastPosition);
  return outcome;
};

/** A command on a project's stream, as a service gives it: without its time. */
type ProjectCommandRun<U> = {
  /** The project's name. */
  readonly project: string;
  /** Finds the project, and folds its stream with the aggregate the composition root assembled. */
  readonly projects: ProjectDirectory;
  /**
   * The project's own commands (it may not exist yet): its stream named from `project` as given.
   * Otherwise the project is found first (404 when it does not exist), its stream named as the
   * directory spells it.
   */
  readonly asGiven?: true;
  readonly command: U;
  readonly decide: (command: Stamped<U>, state: ProjectAggregate) => readonly NewEvent[];
  readonly answer: WriteAnswer;
  readonly now?: Date;
};

/** What a command on a project's stream did. */
type ProjectCommandResult = {
  /** The project's name, as its stream was named. */
  readonly project: string;
  /** The project's state after the command's events. */
  readonly state: ProjectAggregate;
  /** What was appended (empty when the decider decided nothing needed to change). */
  readonly events: readonly RecordedEvent[];
  /** Global position of the last appended event; null if none. */
  readonly lastPosition: bigint | null;
};

/** Runs a command on a project's stream (`streamCommand`), finding the project first. */
export const projectCommand = async <U extends object>(
  ctx: AppContext,
  run: ProjectCommandRun<U>,
): Promise<ProjectCommandResult> => {
  const project = run.asGiven ? run.project : (await run.projects.require(run.project)).name;
  const outcome = await streamCommand(ctx, {
    stream: projectStream(project),
    aggregate: run.projects.aggregate,
    command: run.command,
    decide: run.decide,
    answer: run.answer,
    now: run.now,
  });
  return { project, state: outcome.state, events: outcome.events, lastPosition: outcome.lastPosition };
};

/** A project's stream folded (the real options and secrets, unlike the read model's masked copy). */
export const loadProject = async (ctx: AppContext, projects: ProjectDirectory, name: string) =>
  (await ctx.commands.load(projectStream(name), projects.aggregate)).state;

/** An event naming the resource it is about. */
type Named = Extract<RecordedEvent, { readonly data: { readonly name: string } }>;

/**
 * A project resource's command, as its service runs it (`projectCommand`): with `forgetting`, the
 * type of the event deleting the resource, a delete forgets its secrets too, under every name it
 * had (crypto-shredding).
 */
export const resourceCommand = async <U extends object>(
  ctx: AppContext,
  run: ProjectCommandRun<U> & { readonly forgetting?: Named['type'] },
) => {
  const outcome = await projectCommand(ctx, run);
  if (run.forgetting) {
    const deleted = outcome.events.find((e): e is Named => e.type === run.forgetting);
    await forgetDeleted(ctx.secrets, projectStream(outcome.project), deleted);
  }
  return outcome;
};

/** How a write of a project resource is asked for: `forget`, see `resourceRun`; `now`, `ProjectCommandRun`. */
export type ResourceWriteOptions = { readonly forget?: boolean; readonly now?: Date };

/**
 * A service's removal of a project resource by its name (SQL's `DROP … [IF EXISTS] … [FORGET]`
 * through `dropByName`, REST's DELETE): `ifExists`, a missing one is no error; `forget`, its secrets
 * are forgotten too (crypto-shredding).
 */
export type RemoveByName = (
  projectName: string,
  name: string,
  ifExists: boolean,
  options?: { readonly forget?: boolean },
) => Promise<void>;

/**
 * A project resource service's `run` (`resourceCommand`): its commands decided by `decide` and
 * answered `answer`; asked to `forget`, a delete (its event `deletedBy`) forgets the resource's
 * secrets too, under every name it had (crypto-shredding).
 */
export const resourceRun =
  <U extends object>(
    ctx: AppContext,
    projects: ProjectDirectory,
    kind: Pick<ProjectCommandRun<U>, 'decide' | 'answer'> & { readonly deletedBy: Named['type'] },
  ) =>
  (project: string, command: U, { forget, now }: ResourceWriteOptions = {}) =>
    resourceCommand(ctx, {
      project,
      projects,
      command,
      decide: kind.decide,
      answer: kind.answer,
      now,
      forgetting: forget ? kind.deletedBy : undefined,
    });
