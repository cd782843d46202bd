import fc from 'fast-check';
import { startTestApp, storeKinds, type StoreKind, type TestApp } from '../support/app';
import {
  applyCommand,
  commandSequence,
  describeCommand,
  propertySettings,
  PROPERTY_TIMEOUT_MS,
  type Command,
} from '../support/promise-world';
import { expectCaught } from '../support/seed';

/**
 * A fresh seed each run, printed: PROMISE_SEED repeats a failure (PROMISE_RUNS, PROMISE_SCALE run
 * more). Halved from 10 (issue 62) once the kill check below caught its bug at 5 runs on every one
 * of 20 fresh seeds; `npm run test:deep` runs ten times as many, and each run's fresh seed walks new
 * sequences.
 */
const SETTINGS = propertySettings(5);

/**
 * The log's head, read again (for at most 2 s) while it stands below `projected`. On PostgreSQL the
 * head counts only commits older than every transaction of this database still running, and a
 * transaction of another database that has just ended counts as this one's for a moment (other
 * specs' databases share the server): the head can read lower than what the read model already
 * holds. A read model behind the head is never waited for: that is the failure looked for.
 */
const headReaching = async (t: TestApp, projected: bigint) => {
  const until = Date.now() + 2_000;
  for (;;) {
    const head = (await t.running.ctx.log.head()).position;
    if (head >= projected || Date.now() > until) return head;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

/**
 * The property's check: the commands applied one by one to a fresh app, the read model at the log's
 * head after each. `arrange` changes the app before the first (the kill check's bug), and answers
 * what puts it back.
 */
const seesEveryWrite = async (
  kind: StoreKind,
  commands: Command[],
  arrange: (t: TestApp) => () => void = () => () => undefined,
) => {
  const t: TestApp = await startTestApp(kind, { PROJECTION_POLL_MS: '1' });
  const restore = arrange(t);
  try {
    const transcript: string[] = [];
    for (const c of commands) {
      const outcome = await applyCommand(t, c);
      // What a read waits for first: this process's writes answered ahead of the read model.
      const ownWrites = t.running.ctx.ownWrites('all');
      if (ownWrites) await ownWrites;
      // Read at once: the poll would catch up a moment later and hide an early answer.
      const runner = t.running.ctx.projections;
      const projected = runner.position;
      const highest = runner.highestApplied;
      const head = await headReaching(t, projected);
      // On PostgreSQL the cursor is the last event read in commit order: after commits out of
      // position order it stands below events applied before it (CI saw 307 against a head of 308,
      // all applied). Those count when they were applied at once (none above `highest` was) and
      // the log shows none missing between (`appliedThrough`).
      const through = head > projected && head <= highest ? await runner.appliedThrough() : projected;
      transcript.push(`${describeCommand(c)} -> ${outcome.sql?.type ?? outcome.status}`);
      if (head < projected || through < head)
        throw new Error(
          `answered with the read model at ${through} (cursor ${projected}) while the log's head is ${head}:\n${transcript.join('\n')}`,
        );
    }
  } finally {
    restore();
    await t.running.services.models.idle();
    await t.dispose();
  }
};

/**
 * The kill check's bug: the read model's wait for a position resolving at once, so that writes
 * answer before their events are applied and reads pass the gate without waiting for them; the
 * read model reads the log 50 ms late, so that it has not caught up on its own either.
 */
const neverWaiting = (t: TestApp) => {
  const runner = t.running.ctx.projections;
  const log = t.running.ctx.log;
  const readAll = log.readAll.bind(log);
  const waits = jest.spyOn(runner, 'waitFor').mockResolvedValue(undefined);
  const late = jest.spyOn(log, 'readAll').mockImplementation(async (after, limit) => {
    await new Promise((resolve) => setTimeout(resolve, 50));
    return readAll(after, limit);
  });
  return () => {
    waits.mockRestore();
    late.mockRestore();
  };
};

/**
 * The promise a rebuild relies on from the other side: once a write answers, every read of this
 * process sees every event it appended, so the live model compared with a rebuild is never behind
 * its own log. A write either waited for its events (`settled`) or answered ahead of them, and then
 * a read waits for them (`ownWrites`, which every read of the read model passes first). The runner
 * polls every millisecond here, so it often projects a command's first events on its own before
 * the command has appended its last ones (a write that waited only for its first events then
 * answered early: DELETE /api/files released the file's bytes in events that were not yet in the
 * read model). One app, no other writer: after each answer and the wait a read makes, the read
 * model must stand at the log's head.
 */
describe.each(storeKinds)('every write is seen by the reads after it (%s)', (kind) => {
  it(
    'given generated commands and a runner polling every millisecond, when each answers and a read passes its gate, then the read model is at the log head',
    async () => {
      await fc.assert(
        fc.asyncProperty(commandSequence({ maxLength: 20 }), (commands) => seesEveryWrite(kind, commands)),
        SETTINGS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'kill check: a wait for the read model that resolves at once, while it lags, is caught',
    async () => {
      await expectCaught(
        fc.asyncProperty(commandSequence({ maxLength: 20 }), (commands) =>
          seesEveryWrite(kind, commands, neverWaiting),
        ),
        SETTINGS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
