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

/** A decider's `decide`: each command decided by the function its type names. */
export const decideByType =
  <C extends Command, S, E, A extends unknown[] = []>(deciders: Deciders<C, S, E, A>) =>
  <T extends C['type']>(command: CommandOf<C, T>, state: S, ...also: A): E[] =>
    deciders[command.type](command, state, ...also);
