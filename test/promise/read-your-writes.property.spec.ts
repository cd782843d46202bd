import fc from 'fast-check';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import {
  applyCommand,
  commandSequence,
  describeCommand,
  propertySettings,
  PROPERTY_TIMEOUT_MS,
} from '../support/promise-world';

/** Fixed, so a failure reproduces (PROMISE_SEED and PROMISE_RUNS explore further). */
const SETTINGS = propertySettings(20261126, 10);

/**
 * The promise a rebuild relies on from the other side: a write answers only once this process's
 * read model includes every event it appended, so the live model compared with a rebuild is never
 * behind its own log. The runner polls every millisecond here, so it often projects a command's
 * first events on its own before the command has appended its last ones (a write that waited only
 * for its first events then answered early: DELETE /api/files released the file's bytes in events
 * that were not yet in the read model). One app, no other writer: after each answer the read model
 * must stand at the log's head.
 */
describe.each(storeKinds)('every write answers once the read model includes its events (%s)', (kind) => {
  it(
    'given generated commands and a runner polling every millisecond, when each answers, then the read model is at the log head',
    async () => {
      await fc.assert(
        fc.asyncProperty(commandSequence({ maxLength: 20 }), async (commands) => {
          const t: TestApp = await startTestApp(kind, { PROJECTION_POLL_MS: '1' });
          try {
            const transcript: string[] = [];
            for (const c of commands) {
              const outcome = await applyCommand(t, c);
              // Read at once: the poll would catch up a moment later and hide an early answer.
              const projected = t.running.ctx.projections.position;
              const head = (await t.running.ctx.log.head()).position;
              transcript.push(`${describeCommand(c)} -> ${outcome.sql?.type ?? outcome.status}`);
              if (projected !== head)
                throw new Error(
                  `answered with the read model at ${projected} while the log's head is ${head}:\n${transcript.join('\n')}`,
                );
            }
          } finally {
            await t.running.services.models.idle();
            await t.dispose();
          }
        }),
        SETTINGS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
