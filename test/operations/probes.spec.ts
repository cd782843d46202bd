/**
 * The log-head probe the readiness check and the metrics share, and the readiness rule itself,
 * given logs that answer late or not at all (which a real store does only when it is in trouble).
 */
import { logHeadProbe, LogHeadTimeout, type LogHead } from '../../src/eventlog/headProbe';
import { readinessOf } from '../../src/system/readiness';

const head = (position: number): LogHead => ({ events: position, position: BigInt(position) });

/** A log whose `head()` answers what `next` says, counting how often it is asked. */
const scriptedLog = (next: () => Promise<LogHead>) => {
  let asked = 0;
  return {
    log: {
      head: () => {
        asked++;
        return next();
      },
    },
    asked: () => asked,
  };
};

describe('logHeadProbe', () => {
  it('shares one answer between callers within maxAgeMs, and asks again after', async () => {
    let position = 10;
    const log = scriptedLog(async () => head(position));
    const probe = logHeadProbe(log.log, { maxAgeMs: 50, timeoutMs: 1000 });
    expect(await Promise.all([probe(), probe(), probe()])).toEqual([head(10), head(10), head(10)]);
    expect(log.asked()).toBe(1);
    position = 11;
    expect(await probe()).toEqual(head(10));
    await new Promise((r) => setTimeout(r, 60));
    expect(await probe()).toEqual(head(11));
    expect(log.asked()).toBe(2);
  });

  it('asks again when the shared answer is below what the caller knows the head reaches', async () => {
    let position = 10;
    const log = scriptedLog(async () => head(position));
    const probe = logHeadProbe(log.log, { maxAgeMs: 60_000, timeoutMs: 1000 });
    await probe();
    position = 12;
    expect(await probe(12n)).toEqual(head(12));
    expect(log.asked()).toBe(2);
  });

  it('answers a timeout when the log hangs, asks one query at a time meanwhile, and asks afresh once it ends', async () => {
    let release: (head: LogHead) => void = () => undefined;
    const hung = new Promise<LogHead>((resolve) => (release = resolve));
    let calls = 0;
    const log = scriptedLog(() => (++calls === 1 ? hung : Promise.resolve(head(3))));
    const probe = logHeadProbe(log.log, { maxAgeMs: 60_000, timeoutMs: 30 });
    await expect(probe()).rejects.toThrow(new LogHeadTimeout(30).message);
    await expect(probe()).rejects.toThrow(new LogHeadTimeout(30).message);
    expect(log.asked()).toBe(1);
    release(head(2));
    await hung;
    expect(await probe()).toEqual(head(3));
    expect(log.asked()).toBe(2);
  });
});

describe('readinessOf', () => {
  it('given a log that does not answer, then not ready, saying so, with the error kept for the server log', async () => {
    const refused = new Error('connect ECONNREFUSED 10.0.0.7:5432');
    const readiness = await readinessOf({
      head: () => Promise.reject(refused),
      position: () => 7n,
      appliedThrough: async () => 7n,
      failure: () => null,
      belongsToLog: async () => null,
      rebuildingForLog: () => null,
      maxLag: 0,
    });
    expect(readiness).toEqual({
      ready: false,
      reasons: ['the event log does not answer'],
      retryAfterSeconds: 1,
      logError: refused,
    });
  });

  it('given a stopped read model behind the log, then both reasons, the failure first, retried when it is', async () => {
    const readiness = await readinessOf({
      head: async () => head(1300),
      position: () => 66n,
      appliedThrough: async () => 66n,
      failure: () => ({
        position: 67n,
        eventType: 'FileUploaded',
        projection: 'file-tables',
        error: 'bytes missing',
        since: new Date().toISOString(),
        attempts: 3,
        retryAt: Date.now() + 8000,
      }),
      belongsToLog: async () => null,
      rebuildingForLog: () => null,
      maxLag: 10,
    });
    expect(readiness).toEqual({
      ready: false,
      reasons: [
        'the read model is stopped at event 67: projection file-tables cannot apply event 67 (FileUploaded): bytes missing',
        'the read model is 1,234 events behind the log (at 66, the log at 1300; READY_MAX_LAG_EVENTS is 10)',
      ],
      retryAfterSeconds: 8,
    });
  });

  it('given a cursor behind the head with the events past it applied (PostgreSQL, commits out of position order), then ready at the head; when that cannot be asked, the cursor stands', async () => {
    const probe = (appliedThrough: () => Promise<bigint>) =>
      readinessOf({
        head: async () => head(308),
        position: () => 307n,
        appliedThrough,
        failure: () => null,
        belongsToLog: async () => null,
        rebuildingForLog: () => null,
        maxLag: 0,
      });
    expect(await probe(async () => 308n)).toEqual({ ready: true, position: 308n, head: 308n, lag: 0 });
    expect(await probe(() => Promise.reject(new Error('connection terminated')))).toEqual({
      ready: false,
      reasons: [
        'the read model is 1 event behind the log (at 307, the log at 308; READY_MAX_LAG_EVENTS is 0)',
      ],
      retryAfterSeconds: 1,
    });
  });

  it('given a log whose head stands below the read model, then ready only when the log still holds its last event', async () => {
    const probe = (belongs: string | null) =>
      readinessOf({
        head: async () => head(37),
        position: () => 44n,
        appliedThrough: async () => 44n,
        failure: () => null,
        belongsToLog: async () => belongs,
        rebuildingForLog: () => null,
        maxLag: 10,
      });
    // PostgreSQL's horizon for a moment: the event is there.
    expect(await probe(null)).toEqual({ ready: true, position: 44n, head: 37n, lag: 0 });
    expect(
      await probe('the read model includes the log up to event 44, which the log does not hold'),
    ).toEqual({
      ready: false,
      reasons: [
        'the read model includes the log up to event 44, which the log does not hold: rebuilding the read model from the log',
      ],
      retryAfterSeconds: 1,
    });
  });
});
