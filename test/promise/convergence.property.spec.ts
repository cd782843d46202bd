import fc from 'fast-check';
import { startPostgresCluster, type TestApp } from '../support/app';
import {
  differencesFrom,
  explain,
  liveDigest,
  scratchRebuild,
  waitForHead,
} from '../support/promise-rebuild';
import { applyAll, commandSequence, propertySettings, PROPERTY_TIMEOUT_MS } from '../support/promise-world';

/** A fresh seed each run, printed: PROMISE_SEED repeats a failure (PROMISE_RUNS, PROMISE_SCALE run more). */
const SETTINGS = propertySettings(10);

/**
 * The promise across processes: two apps on one PostgreSQL log, each with its own DuckDB (what two
 * processes started with one EVENT_STORE_URL and their own DATA_DIR are), take generated commands
 * alternately. Each decides from the log, so a command may be refused on one node because of what
 * the other did; in half the runs each pair of commands is sent to both at once, so appends race
 * and commit out of position order. Whatever was accepted, once both read models include the log's
 * head they must be equal table by table, and equal to a rebuild from the log.
 */
describe('two processes on one PostgreSQL log converge to one read model', () => {
  it(
    'given generated commands sent alternately to both, when both reach the log head, then their digests are equal',
    async () => {
      await fc.assert(
        fc.asyncProperty(commandSequence({ maxLength: 20 }), fc.boolean(), async (commands, together) => {
          const cluster = await startPostgresCluster(2);
          const [a, b] = cluster.apps as [TestApp, TestApp];
          try {
            const { transcript, unhealthy } = await applyAll([a, b], commands, { together });
            if (unhealthy.length)
              throw new Error(
                `commands answered as no refusal should:\n${unhealthy.join('\n')}\n\n${transcript.join('\n')}`,
              );
            for (const app of [a, b]) await app.running.services.models.idle();

            const { head, statuses } = await waitForHead([a, b]);
            const [sa, sb] = statuses as [(typeof statuses)[0], (typeof statuses)[0]];
            if (sa.digest !== sb.digest) {
              // The status names the tables that differ; the rows say how (read from b against a).
              const scratch = await scratchRebuild(a, 1000);
              try {
                const fromA = await differencesFrom(a, await liveDigest(a), scratch);
                const fromB = await differencesFrom(b, await liveDigest(b), scratch);
                throw new Error(
                  [
                    `at log head ${head} the nodes' digests differ`,
                    explain('node a against a rebuild', fromA.differences, []),
                    explain('node b against a rebuild', fromB.differences, transcript),
                  ].join('\n'),
                );
              } finally {
                await scratch.close();
              }
            }
            expect(sb.tables).toEqual(sa.tables);

            // Both equal a rebuild from the log, too (so neither converged on a wrong model).
            const scratch = await scratchRebuild(a, 7);
            try {
              const { differences } = await differencesFrom(a, await liveDigest(a), scratch);
              if (differences.length)
                throw new Error(
                  explain('node a against a rebuild with batch size 7', differences, transcript),
                );
            } finally {
              await scratch.close();
            }
          } finally {
            for (const app of [a, b]) await app.running.services.models.idle();
            await cluster.dispose();
          }
        }),
        SETTINGS,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
