import type { SqlContext, TableAnswer, TableRows } from '../answers';
import { deadlineIn, withinDeadline } from '../deadline';
import { toSqlError } from '../errors';
import { releaseResult, withSelect, type SelectDeps, type SelectInput, type SelectLimits } from './select';
import { markReusable, MAX_CACHED_ROWS, streamBound } from './statementCache';
import { resultRows } from './values';

/** What streamed SELECTs are doing now, for operators and tests. */
type StreamCounters = {
  /** Streams holding a pooled reader (opened, not yet read to their end, stopped or interrupted). */
  open: number;
  /** Chunks of rows read from DuckDB by every stream so far. */
  chunks: number;
};
export const streamCounters = (): StreamCounters => ({ open: 0, chunks: 0 });

/** Rows already in hand, yielded as one chunk (made only when iterated: the MySQL door writes `whole`). */
class OneChunkRows implements AsyncIterable<unknown[][]> {
  constructor(private readonly data: unknown[][]) {}
  async *[Symbol.asyncIterator]() {
    yield this.data;
  }
}
const wasCut = () => true;
const wasWhole = () => false;

/**
 * An answer in hand (cached, or pushed down to an external database) as a stream of one chunk;
 * with `context`, as the SQL service answers it. Built with no closure per answer: a cached
 * `SELECT 1` over the MySQL door is made of little else.
 */
export function oneChunk(answer: TableAnswer): TableRows;
export function oneChunk(answer: TableAnswer, context: SqlContext): TableRows & { context: SqlContext };
export function oneChunk(answer: TableAnswer, context?: SqlContext): TableRows & { context?: SqlContext } {
  const rows = new OneChunkRows(answer.data);
  const truncated = answer.truncated === true ? wasCut : wasWhole;
  const { column_names, column_types, data } = answer;
  return context === undefined
    ? { type: 'table', column_names, column_types, rows, whole: data, truncated }
    : { type: 'table', column_names, column_types, rows, whole: data, truncated, context };
}

/** A failure mid-result, as the MySQL port expects it (the code the client is sent). */
const rowError = (error: unknown) => {
  const e = toSqlError(error);
  return Object.assign(new Error(e.message), { error_code: e.code });
};

/**
 * Runs one SELECT and answers with its columns as soon as DuckDB has them; its rows are then read
 * chunk by chunk as the consumer asks (converted as `runSelect` converts them, cut at the same row
 * and byte limits), so a large result never sits whole in memory. The pooled reader is held only
 * until the consumer has read the last chunk or stops (`return()` on the iterator), the deadline
 * passes or the client leaves (the query is interrupted then): a consumer that never reads again
 * keeps it no longer than the deadline. Temporary tables go with the reader. A small answer of a
 * deterministic local query read to its end is marked reusable as runSelect marks it, and handed to
 * `onCached` (the SQL service's answer cache); an answer in hand (pushed down) is served as one chunk.
 */
export const streamSelect = (
  deps: SelectDeps,
  input: SelectInput,
  limits: SelectLimits,
  counters: StreamCounters = streamCounters(),
  /**
   * Told of the whole answer of a deterministic local query once read to its end, uncut (marked
   * reusable; at most MAX_CACHED_ROWS rows are kept while reading): the caller's answer cache.
   */
  onCached: (answer: TableAnswer) => void = () => undefined,
): Promise<TableRows> => {
  const deadline = limits.deadline ?? deadlineIn(limits.timeoutMs);
  let opened: (rows: TableRows) => void = () => undefined;
  const open = new Promise<TableRows>((resolve) => (opened = resolve));
  let holding = false;
  const work = withSelect<TableRows | undefined>(
    deps,
    input,
    { ...limits, deadline },
    oneChunk,
    async (local) => {
      // Planned and executed together: a statement planned earlier is checked against the data only
      // once all is read (readDeterministic), too late for rows already sent.
      const result = await streamBound(local.c, local.sql, local.values, local.types);
      const reader = resultRows(result, {
        rowLimit: limits.rowLimit,
        maxBytes: limits.maxAnswerBytes,
        check: local.check,
      });
      // A small answer of a deterministic local query is kept whole as it passes, and handed to the
      // caller's cache once read to its end, as runSelect marks it: dashboards repeating queries
      // over the MySQL door are answered without DuckDB, as over HTTP.
      let kept: unknown[][] | undefined = local.reusable ? [] : undefined;
      const cacheWhenWhole = () => {
        if (!kept || !local.reusable || reader.truncated()) return;
        const answer: TableAnswer = {
          type: 'table',
          column_names: local.namesOf(reader.column_names),
          column_types: reader.column_types,
          data: kept,
        };
        onCached(markReusable(answer, reader.bytes(), local.reads));
      };
      let finish = () => undefined as void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      /** A fetch running on the connection: it goes back to the pool only once DuckDB lets go. */
      let reading: Promise<unknown> | undefined;
      /** Set once the connection is no longer this stream's (read to the end, stopped, interrupted). */
      let released = false;
      /** Whether DuckDB's result was read to its end (else its query's state is released). */
      let exhausted = false;
      let done = false;
      const stop = async () => {
        done = true;
        finish();
        await work.catch(() => undefined);
      };
      const end = { done: true, value: undefined } as const;
      const rows: AsyncIterableIterator<unknown[][]> = {
        [Symbol.asyncIterator]: () => rows,
        next: async () => {
          if (done) return end;
          try {
            if (released) throw new Error('The result was released before it was read');
            const fetching = reader.next();
            reading = fetching;
            const chunk = await fetching;
            reading = undefined;
            if (!chunk) {
              exhausted = !reader.truncated();
              cacheWhenWhole();
              await stop();
              return end;
            }
            counters.chunks++;
            if (kept && kept.length + chunk.length <= MAX_CACHED_ROWS) kept.push(...chunk);
            else kept = undefined;
            return { done: false, value: chunk };
          } catch (error) {
            reading = undefined;
            await stop();
            throw rowError(local.explain(error));
          }
        },
        return: async () => {
          await stop();
          return end;
        },
      };
      opened({
        type: 'table',
        column_names: local.namesOf(reader.column_names),
        column_types: reader.column_types,
        rows,
        truncated: reader.truncated,
      });
      holding = true;
      counters.open++;
      await Promise.race([finished, local.ended]);
      released = true;
      await reading?.catch(() => undefined);
      if (!exhausted) await releaseResult(local.c);
      return undefined;
    },
  );
  // Counted until the reader is back in the pool (temporary tables dropped).
  const settled = () => {
    if (holding) counters.open--;
  };
  work.then(settled, settled);
  // Whichever settles first: an answer before the rows (cached, pushed down, or the columns of the
  // stream), or the failure to get one. Opening is within the deadline; reading keeps to it too.
  return withinDeadline(Promise.race([open, work.then((answer) => answer ?? open)]), deadline);
};
