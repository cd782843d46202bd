import { boundsViolationDetail, type RecordedEvent } from '../../events';
import { invalid } from '../shared/errors';
import { StreamVersionConflict, type EventLog, type NewEvent } from './types';

/** How a stream's events fold into the state its deciders read. */
export type Aggregate<S> = {
  readonly initialState: () => S;
  readonly evolve: (state: S, event: RecordedEvent) => S;
};

export type CommandOutcome<S> = {
  /** The state after the command's events. */
  readonly state: S;
  /** What was appended (empty when the decider decided nothing needed to change). */
  readonly events: readonly RecordedEvent[];
  /** Global position of the last appended event, to wait for the projections; null if none. */
  readonly lastPosition: bigint | null;
};

export type CommandRunnerOptions = {
  /** Stream states kept in memory. */
  cacheSize?: number;
  /**
   * Asked before anything is appended: throws when this process must not take writes now (its read
   * model is stopped at an event it cannot apply). Nothing is written then.
   */
  assertWritable?: () => void;
};

const MAX_ATTEMPTS = 12;
const backoff = (attempt: number) =>
  new Promise((r) => setTimeout(r, Math.min(200, 2 ** attempt) + Math.random() * 10 * attempt));

/**
 * Runs commands: 1. load the stream's state (cached, reading only new events), 2. decide,
 * 3. append expecting the version that was read, 4. on a version conflict (another process wrote
 * first), reload and decide again. A decider that throws aborts with nothing written. A client's own
 * precondition (If-Match) is checked by the decider, so a retry never hides a stale client.
 */
export const commandRunner = (log: EventLog, options: CommandRunnerOptions = {}) => {
  const cacheSize = options.cacheSize ?? 2000;
  /** Counters since start, for the operator (GET /api/metrics). */
  const counts = { commands: 0, appends: 0, appendedEvents: 0, conflicts: 0 };
  const cache = new Map<string, { version: bigint; state: unknown; aggregate: Aggregate<unknown> }>();

  const load = async <S>(
    stream: string,
    aggregate: Aggregate<S>,
  ): Promise<{ state: S; version: bigint; fresh: RecordedEvent[] }> => {
    const cached = cache.get(stream);
    const start =
      cached && cached.aggregate === aggregate
        ? { state: cached.state as S, version: cached.version }
        : { state: aggregate.initialState(), version: 0n };
    if (cached && cached.aggregate === aggregate && log.soleWriter) return { ...start, fresh: [] };
    const { events, version } = await log.readStream(stream, start.version);
    let state = start.state;
    for (const e of events) state = aggregate.evolve(state, e);
    const current = events.length ? version : start.version;
    remember(stream, current, state, aggregate as Aggregate<unknown>);
    return { state, version: current, fresh: events };
  };

  const remember = (stream: string, version: bigint, state: unknown, aggregate: Aggregate<unknown>) => {
    cache.delete(stream);
    cache.set(stream, { version, state, aggregate });
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
  };

  const run = <S>(
    stream: string,
    aggregate: Aggregate<S>,
    decide: (state: S) => readonly NewEvent[],
  ): Promise<CommandOutcome<S>> =>
    log.exclusive(stream, async () => {
      counts.commands++;
      for (let attempt = 1; ; attempt++) {
        const { state, version } = await load(stream, aggregate);
        const decided = decide(state);
        if (decided.length === 0) return { state, events: [], lastPosition: null };
        options.assertWritable?.();
        try {
          const result = await log.append(stream, decided, version);
          counts.appends++;
          counts.appendedEvents += result.events.length;
          // What we wrote now carries positions (ids derive from them) and timestamps.
          const after = result.events.reduce(aggregate.evolve, state);
          remember(stream, result.streamVersion, after, aggregate as Aggregate<unknown>);
          return { state: after, events: result.events, lastPosition: result.lastPosition };
        } catch (error) {
          // The contract refused a value the client sent (too deep, too large, a NUL): nothing was written.
          const outOfBounds = boundsViolationDetail(error);
          if (outOfBounds !== null) throw invalid(outOfBounds, 'Value out of bounds');
          if (error instanceof StreamVersionConflict) counts.conflicts++;
          if (!(error instanceof StreamVersionConflict) || attempt >= MAX_ATTEMPTS) throw error;
          await backoff(attempt);
        }
      }
    });

  return {
    run,
    /** Commands run, appends made, events appended and version conflicts met (each retried), since start. */
    stats: () => ({ ...counts }),
    /** The current state of a stream, for reads that need the log's view (e.g. a secret to use). */
    load: <S>(stream: string, aggregate: Aggregate<S>) =>
      log.exclusive(stream, () => load(stream, aggregate)),
  };
};

export type CommandRunner = ReturnType<typeof commandRunner>;
