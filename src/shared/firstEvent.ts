import type { EventEmitter } from 'node:events';

/**
 * Settles on the first of `events` that `emitter` emits (a socket's 'drain' or its 'close'), its
 * listeners then removed. Unlike `events.once`, an end of the peer ('close') is one of the awaited
 * events, not an error: a writer waiting for room stops waiting when the client leaves.
 */
export const firstEvent = (emitter: EventEmitter, events: readonly string[]): Promise<void> =>
  new Promise((resolve) => {
    const done = () => {
      for (const name of events) emitter.off(name, done);
      resolve();
    };
    for (const name of events) emitter.on(name, done);
  });
