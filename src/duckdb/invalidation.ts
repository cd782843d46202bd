import { messageOf } from '../shared/errors';
import { isInvalidatedMessage } from './errors';

/**
 * Watches for DuckDB invalidating the database (after a FATAL error): the instance answers nothing
 * more until it is opened again, which only a new process does safely (see main.ts). Told of the
 * errors met on the instance's connections; its listeners are called once, with DuckDB's words.
 */
export class InvalidationWatch {
  private message: string | null = null;
  private readonly listeners: ((message: string) => void)[] = [];

  /** Why DuckDB invalidated the database, once it has. */
  get invalidated(): string | null {
    return this.message;
  }

  /** An error met on one of the instance's connections. */
  notice(error: unknown) {
    const message = messageOf(error);
    if (this.message !== null || !isInvalidatedMessage(message)) return;
    this.message = message;
    for (const listener of this.listeners.splice(0)) listener(message);
  }

  /** Calls `listener` (once) when the database is invalidated: now, if it already is. */
  onInvalidated(listener: (message: string) => void) {
    if (this.message !== null) listener(this.message);
    else this.listeners.push(listener);
  }
}
