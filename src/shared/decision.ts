import { requireLiveProject, type ProjectRef, type ProjectState } from './projectState';
import { findByName } from './params';

/** When a command is decided: the service stamps it from its clock (src/projectCommand.ts), never the decider. */
export type Now = { now: Date };

type Command = { readonly type: string };

/** The command of type `T`, its type narrowed to `T`. */
type CommandOf<C extends Command, T extends C['type']> = {
  [P in T]: Extract<C, { readonly type: P }> & { readonly type: P };
}[T];

/**
 * A decider's rules: one function per command type, given the command narrowed to its type, the
 * state and what else the decider is given (`A`). Total: a command type without one does not compile.
 */
export type Deciders<C extends Command, S, E, A extends unknown[] = []> = {
  readonly [T in C['type']]: (command: CommandOf<C, T>, state: S, ...also: A) => E[];
};

/**
 * A decider's `decide`: each command decided by the function its type names. Generic in `T`, so
 * that the function `command.type` picks is known to take this very command (no cast, no switch).
 */
export const decideByType =
  <C extends Command, S, E, A extends unknown[] = []>(deciders: Deciders<C, S, E, A>) =>
  <T extends C['type']>(command: CommandOf<C, T>, state: S, ...also: A): E[] =>
    deciders[command.type](command, state, ...also);

/** What a project resource's command is decided in: its project, live, and the command's time. */
export type InProject = { readonly project: ProjectRef; readonly at: string };

/** One rule of a project resource's decider: how a command of type `T` is decided. */
export type ProjectRule<C extends Command, T extends C['type'], S, E> = Deciders<C, S, E, [InProject]>[T];

/**
 * `decideByType` for a project's resources: whatever the command, its project must be live first
 * (else 404, before any rule of the command), and its time is the same ISO text in every event.
 */
export const decideInProject = <
  C extends Command & { readonly metadata: Now },
  S extends { readonly project: ProjectState },
  E,
>(
  deciders: Deciders<C, S, E, [InProject]>,
) => {
  const decide = decideByType(deciders);
  return <T extends C['type']>(command: CommandOf<C, T>, state: S): E[] =>
    decide(command, state, {
      project: requireLiveProject(state.project),
      at: command.metadata.now.toISOString(),
    });
};

/**
 * A project resource's deletion by name (SQL's DROP <kind> [IF EXISTS] <name>, REST's DELETE): its
 * deletion (`deleted`), or nothing when no resource has the name and IF EXISTS was said; without
 * it, `require` answers 404. (The SQL statement's handler is src/sql/handlers.ts's `dropByName`.)
 */
export const deletionByName = <R extends { readonly name: string }, E>(
  resources: ReadonlyMap<bigint, R>,
  { name, ifExists }: { readonly name: string; readonly ifExists: boolean },
  require: (resources: ReadonlyMap<bigint, R>, name: string) => R,
  deleted: (resource: R) => E,
): E[] => (ifExists && !findByName(resources.values(), name) ? [] : [deleted(require(resources, name))]);
