import { boundsViolationDetail, type RecordedEvent } from '../../events';
import { invalid } from '../shared/errors';
import { currentRequest, noteAppended, type RequestContext } from '../shared/requestContext';
import {
  AppendRefused,
  StreamTampered,
  StreamVersionConflict,
  type AppendResult,
  type EventLog,
  type NewEvent,
} from './types';

import type { Aggregate } from '../shared/aggregate';

export type { Aggregate };

/**
 * A stream that takes facts in order with nothing to decide on (a knowledge base's documents and
 * evaluations, an agent's evaluations): its commands append what they are given.
 */
export const FACTS: Aggregate<null> = { initialState: () => null, evolve: () => null };

export type CommandOutcome<S> = {
  /** The state after the command's events. */
  readonly state: S;
  /** What was appended (empty when the decider decided nothing needed to change). */
  readonly events: readonly RecordedEvent[];
  /** Global position of the last appended event, to wait for the projections; null if none. */
  readonly lastPosition: bigint | null;
};

type CommandRunnerOptions = {
  /** Stream states kept in memory. */
  cacheSize?: number;
  /** Most commands decided into one append (group commit). */
  maxBatch?: number;
  /**
   * With other writers (PostgreSQL), decide on the cached stream state (kept current by `observe`)
   * without reading the stream first: one round trip less per write; a stale state costs a retry.
   */
  trustCachedStreams?: boolean;
  /**
   * Asked before anything is appended: throws when this process must not take writes now (its read
   * model is stopped at an event it cannot apply). Nothing is written then.
   */
  assertWritable?: () => void;
};

const MAX_ATTEMPTS = 12;
const backoff = (attempt: number) =>
  new Promise((r) => setTimeout(r, Math.min(200, 2 ** attempt) + Math.random() * 10 * attempt));

/** A command waiting for its stream, and who to tell how it went (once). */
type Waiting = {
  readonly aggregate: Aggregate<unknown>;
  readonly decide: (state: unknown) => readonly NewEvent[];
  /** The request that sent it: its events carry this actor, whoever's turn appended them. */
  readonly cause: RequestContext | undefined;
  readonly resolve: (outcome: CommandOutcome<unknown>) => void;
  readonly reject: (error: unknown) => void;
};

const waitingCommand = (
  aggregate: Aggregate<unknown>,
  decide: (state: unknown) => readonly NewEvent[],
  resolve: (outcome: CommandOutcome<unknown>) => void,
  reject: (error: unknown) => void,
): Waiting => {
  let settled = false;
  const once =
    <A>(f: (a: A) => void) =>
    (a: A) => {
      if (settled) return;
      settled = true;
      f(a);
    };
  return { aggregate, decide, cause: currentRequest(), resolve: once(resolve), reject: once(reject) };
};

/** Runs of consecutive commands on the same aggregate, at most `max` each (in arrival order). */
const byAggregate = (batch: readonly Waiting[], max: number): Waiting[][] => {
  const groups: Waiting[][] = [];
  for (const w of batch) {
    const last = groups.at(-1);
    if (last && last[0]!.aggregate === w.aggregate && last.length < max) last.push(w);
    else groups.push([w]);
  }
  return groups;
};

/**
 * Positions no stored event has (exact as JSON numbers, below 2^53): the state a command is decided
 * on includes the events decided before it in the same batch, which have no position yet. A
 * decision that copies one into its events (the id of a resource created earlier in the batch) must
 * wait for the real one.
 */
const PROVISIONAL_BASE = 1n << 52n;

const mentionsAny = (value: unknown, marks: ReadonlySet<string>): boolean => {
  if (typeof value === 'number' || typeof value === 'bigint') return marks.has(String(value));
  if (typeof value === 'string') return [...marks].some((m) => value.includes(m));
  if (Array.isArray(value)) return value.some((v) => mentionsAny(v, marks));
  if (value && typeof value === 'object') return Object.values(value).some((v) => mentionsAny(v, marks));
  return false;
};

/** A command's decision: its events (and the state it was decided on), or why it was refused. */
type Decision = { waiting: Waiting; before: unknown } & (
  { events: readonly NewEvent[]; error?: undefined } | { events?: undefined; error: unknown }
);

/**
 * Decides each command on the state the ones before it leave, in order. A command whose events would
 * carry a position not yet known (it used something created earlier in the batch) is deferred, with
 * every command after it, to the next append, and decided again on the recorded state.
 */
const decideInTurn = (state: unknown, aggregate: Aggregate<unknown>, batch: readonly Waiting[]) => {
  const decided: Decision[] = [];
  const marks = new Set<string>();
  let current = state;
  for (let i = 0; i < batch.length; i++) {
    const waiting = batch[i]!;
    let events: readonly NewEvent[];
    try {
      events = waiting.decide(current);
    } catch (error) {
      decided.push({ waiting, before: current, error });
      continue;
    }
    if (marks.size > 0 && events.some((e) => mentionsAny(e.data, marks)))
      return { decided, deferred: batch.slice(i) };
    decided.push({ waiting, before: current, events });
    for (const e of events) {
      const position = PROVISIONAL_BASE + BigInt(marks.size);
      marks.add(String(position));
      // Evolves read positions (ids, versions); nothing is decided on the rest of meta.
      const meta = {
        position,
        stream: '',
        streamPosition: position,
        eventId: '',
        recordedAt: '',
        schemaVersion: 0,
      };
      current = aggregate.evolve(current, { ...e, meta });
    }
  }
  return { decided, deferred: [] as Waiting[] };
};

/**
 * After an append: what was written now carries positions (ids derive from them) and timestamps, so
 * each command's outcome is the state after its own events as recorded (a refused one fails). The
 * state after them all.
 */
const settleAppended = (
  decided: readonly Decision[],
  before: unknown,
  aggregate: Aggregate<unknown>,
  result: AppendResult,
): unknown => {
  let state = before;
  let at = 0;
  for (const d of decided) {
    if (!d.events) {
      d.waiting.reject(d.error);
      continue;
    }
    const own = result.events.slice(at, at + d.events.length);
    at += d.events.length;
    state = own.reduce(aggregate.evolve, state);
    const lastPosition = own.at(-1)?.meta.position ?? null;
    // The answer to the request that sent it names its position (X-Log-Position).
    if (lastPosition !== null) noteAppended(d.waiting.cause, lastPosition);
    d.waiting.resolve({ state, events: own, lastPosition });
  }
  return state;
};

/**
 * Runs commands: 1. load the stream's state (cached, reading only new events), 2. decide (the
 * commands waiting for the same stream one after another: group commit), 3. append expecting the
 * version that was read, 4. on a version conflict (another process wrote first), reload and decide
 * again (a reload that finds the stream where the refused append expected it: the log records the
 * stream at another version than its events reach, StreamTampered, which no retry resolves). A
 * decider that throws fails its own command with nothing written. A client's own precondition
 * (If-Match) is checked by the decider, so a retry never hides a stale client.
 */
export const commandRunner = (log: EventLog, options: CommandRunnerOptions = {}) => {
  const cacheSize = options.cacheSize ?? 2000;
  const maxBatch = options.maxBatch ?? 256;
  /** Counters since start, for the operator (GET /api/metrics). */
  const counts = { commands: 0, appends: 0, appendedEvents: 0, conflicts: 0, staleCacheRetries: 0 };
  const cache = new Map<string, { version: bigint; state: unknown; aggregate: Aggregate<unknown> }>();

  /**
   * A stream's state: the cached one, brought up to date from the log. With `trustCache` and other
   * writers, the cached state is used without a read (`unverified`): the append's version check
   * catches a stale one, and a refusal is only ever judged on a verified state.
   */
  const load = async <S>(
    stream: string,
    aggregate: Aggregate<S>,
    trustCache = false,
  ): Promise<{ state: S; version: bigint; unverified: boolean }> => {
    const cached = cache.get(stream);
    const known = cached !== undefined && cached.aggregate === aggregate;
    const start = known
      ? { state: cached.state as S, version: cached.version }
      : { state: aggregate.initialState(), version: 0n };
    if (known && log.soleWriter) return { ...start, unverified: false };
    // With other writers, a cached state is decided on as it is, and a stream this process never met
    // is presumed new (most are: a project, a run, a message): the append's check tells, at the price
    // of one failed append when the guess was wrong.
    if (trustCache && !log.soleWriter) return { ...start, unverified: true };
    const { events, version } = await log.readStream(stream, start.version);
    let state = start.state;
    for (const e of events) state = aggregate.evolve(state, e);
    const current = events.length ? version : start.version;
    remember(stream, current, state, aggregate as Aggregate<unknown>);
    return { state, version: current, unverified: false };
  };

  /**
   * Events the read model's tail saw (other processes' included): a cached stream they continue is
   * brought forward, so the next command on it needs no read; a gap drops the entry, and so does an
   * event the tail sees otherwise than `readStream` gives it (`reread`: one holding sealed secrets).
   */
  const observe = (events: readonly RecordedEvent[], reread?: (e: RecordedEvent) => boolean) => {
    for (const e of events) {
      const cached = cache.get(e.meta.stream);
      if (!cached || e.meta.streamPosition <= cached.version) continue;
      if (e.meta.streamPosition === cached.version + 1n && !reread?.(e))
        cache.set(e.meta.stream, {
          ...cached,
          version: e.meta.streamPosition,
          state: cached.aggregate.evolve(cached.state, e),
        });
      else cache.delete(e.meta.stream);
    }
  };

  const remember = (stream: string, version: bigint, state: unknown, aggregate: Aggregate<unknown>) => {
    cache.delete(stream);
    cache.set(stream, { version, state, aggregate });
    if (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
  };

  /** Commands waiting for their stream, in arrival order; taken as one batch when the stream is free. */
  const waiting = new Map<string, Waiting[]>();

  /**
   * Group commit: commands that arrive for a stream while it is busy wait together; the next time
   * the stream is free they are decided one after another on the in-memory state and appended in one
   * append. Each still gets its own outcome: a decider that throws fails only its own command.
   */
  const run = <S>(
    stream: string,
    aggregate: Aggregate<S>,
    decide: (state: S) => readonly NewEvent[],
  ): Promise<CommandOutcome<S>> =>
    new Promise<CommandOutcome<S>>((resolve, reject) => {
      counts.commands++;
      const entry = waitingCommand(
        aggregate as Aggregate<unknown>,
        decide as (state: unknown) => readonly NewEvent[],
        resolve as (outcome: CommandOutcome<unknown>) => void,
        reject,
      );
      const queue = waiting.get(stream);
      if (queue) {
        queue.push(entry);
        return;
      }
      waiting.set(stream, [entry]);
      void log.exclusive(stream, async () => {
        const batch = waiting.get(stream) ?? [];
        waiting.delete(stream);
        for (const group of byAggregate(batch, maxBatch)) {
          try {
            await runGroup(stream, group);
          } catch (error) {
            // runGroup settles each command; a throw here is a bug (e.g. in an evolve): fail them all.
            for (const w of group) w.reject(error);
          }
        }
      });
    });

  /** Decides and appends one group (same aggregate), retrying the whole group on a version conflict. */
  const runGroup = async (stream: string, group: readonly Waiting[]): Promise<void> => {
    const aggregate = group[0]!.aggregate;
    let pending = group;
    let trustCache = options.trustCachedStreams ?? false;
    /** The version a state read from the log was refused at: the reload after must have moved past it. */
    let refusedAt: bigint | undefined;
    for (let attempt = 1; pending.length > 0;) {
      const loaded = await load(stream, aggregate, trustCache);
      // A lost race shows the winner's events on the reload. None: the log refuses the version the
      // stream's own events end at, and would refuse every retry alike.
      if (refusedAt !== undefined && loaded.version === refusedAt)
        throw new StreamTampered(stream, refusedAt);
      refusedAt = undefined;
      const { decided, deferred } = decideInTurn(loaded.state, aggregate, pending);
      if (loaded.unverified && decided.some((d) => !d.events || d.events.length === 0)) {
        // A refusal or a no-op appends nothing, so no version check would catch a stale state.
        trustCache = false;
        continue;
      }
      const writing = decided.filter((d) => d.events && d.events.length > 0);
      if (writing.length === 0) {
        for (const d of decided)
          if (d.events) d.waiting.resolve({ state: d.before, events: [], lastPosition: null });
          else d.waiting.reject(d.error);
        pending = deferred;
        continue;
      }
      try {
        options.assertWritable?.();
      } catch (error) {
        // Refused before anything is appended; a presumed state may be hiding a no-op (a process
        // restarting finds its default project already there): judge on the log first.
        if (!loaded.unverified) throw error;
        trustCache = false;
        continue;
      }
      const events = writing.flatMap((d) => d.events!);
      const causes = writing.flatMap((d) => d.events!.map(() => d.waiting.cause));
      let result: AppendResult;
      try {
        result = await log.append(stream, events, loaded.version, causes);
      } catch (error) {
        const outOfBounds = boundsViolationDetail(error);
        if (!(error instanceof StreamVersionConflict) && pending.length > 1) {
          // Nothing was written, and the failure may be one command's alone (a value the contract or
          // the store refuses): run each alone, so only the one that cannot be stored fails.
          for (const w of pending) await runGroup(stream, [w]).catch((e: unknown) => w.reject(e));
          return;
        }
        if (outOfBounds !== null) throw invalid(outOfBounds, 'Value out of bounds');
        if (error instanceof AppendRefused) throw invalid(error.reason, 'Value the log cannot store');
        if (!(error instanceof StreamVersionConflict) || attempt >= MAX_ATTEMPTS) throw error;
        if (loaded.unverified) counts.staleCacheRetries++;
        else {
          counts.conflicts++;
          refusedAt = loaded.version;
          // The sole writer's cache is all there is, and is not read again unless dropped.
          if (log.soleWriter) cache.delete(stream);
        }
        // Another process wrote first (or the cache was behind): decide the same commands again, in
        // order, on what the log holds. A guess that missed is retried at once; a race backs off.
        if (!loaded.unverified) await backoff(attempt);
        attempt++;
        trustCache = false;
        continue;
      }
      counts.appends++;
      counts.appendedEvents += result.events.length;
      remember(
        stream,
        result.streamVersion,
        settleAppended(decided, loaded.state, aggregate, result),
        aggregate,
      );
      pending = deferred;
    }
  };

  return {
    run,
    observe,
    /**
     * Commands run, appends made, events appended, version conflicts met (each reloaded, and retried
     * unless the stream had not moved) and appends retried because a cached stream state was behind,
     * since start.
     */
    stats: () => ({ ...counts }),
    /** The current state of a stream, for reads that need the log's view (e.g. a secret to use). */
    load: <S>(stream: string, aggregate: Aggregate<S>) =>
      log.exclusive(stream, () => load(stream, aggregate)),
  };
};

export type CommandRunner = ReturnType<typeof commandRunner>;
