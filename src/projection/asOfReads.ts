import { AsyncLocalStorage } from 'node:async_hooks';
import type { Duck } from '../duckdb/database';
import { readingAsOf } from './history';

/**
 * Reads as of a log position, for a whole call chain (`GET …?as_of=`): every read-model query the
 * chain makes through `Duck.query` reads the history-keeping tables as they stood then (history.ts),
 * so a service answers about that moment with the code it answers about now.
 */
const scope = new AsyncLocalStorage<bigint>();

export const readAsOf = <T>(position: bigint, work: () => T): T => scope.run(position, work);

/** The position this call chain reads as of, if any (caches of live answers stand aside then). */
export const readingAsOfPosition = (): bigint | undefined => scope.getStore();

/** The read model, its `query` reading as of the chain's position when it has one. */
export const withAsOfReads = (duck: Duck): Duck => {
  const scoped = Object.create(duck) as Duck & { query: Duck['query'] };
  scoped.query = (sql, params) => {
    const position = scope.getStore();
    return duck.query(position === undefined ? sql : readingAsOf(sql, position), params);
  };
  return scoped;
};
