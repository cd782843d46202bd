/**
 * Tasks of this process: the runs under way (their abort, by task id) and the tasks it ran (whose
 * working copies follow their run to its end here). Shared by every agent.
 */
export type LiveTasks = {
  readonly running: Map<string, AbortController>;
  readonly ranHere: Set<string>;
};
export const liveTasks = (): LiveTasks => ({ running: new Map(), ranHere: new Set() });
