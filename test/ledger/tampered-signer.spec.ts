/**
 * A service started on a log whose checkpoint events were deleted from the store (the stream's row
 * still at the version they had reached): every append to the checkpoint stream expects the version
 * its remaining events end at, and the log refuses it. The command runner reads the stream again
 * after that conflict, finds it where it was, and fails at once (StreamTampered) instead of
 * retrying a conflict no retry can resolve; the signer then says so once and signs nothing more, at
 * its ticks or at stop, while `verify` still reports the tampering. Where the read model, rebuilt,
 * no longer extends the witnessed tree, the witness guard refuses first, before any command.
 */
import path from 'node:path';
import { storeKinds, type TestApp } from '../support/app';
import { logLines } from '../support/logLines';
import { givenProject } from '../support/world';
import { expectSigningRefused, loggedEvents, onLogStore, signingApp } from './logStore';

type LogLine = { level: number; msg: string; err?: { type?: string; message?: string } };

const REFUSED = /^ledger: the log's checkpoint stream was changed outside the service/;
/** The witness guard (witness-guard.spec.ts), which runs before any command. */
const CONTRADICTED = /^ledger: the witness contradicts the tree/;
const STOPPED = /^ledger: .*this process signs no more checkpoints/;

const EVERY_CHECKPOINT = `DELETE FROM emt_messages WHERE stream_id = 'ledger-checkpoints'`;

type Tampering = {
  readonly sql: string;
  /** Restarted with a witness that holds nothing yet (a node whose witness was lost or elsewhere). */
  readonly emptyWitness?: boolean;
  /** Which check refuses: the checkpoint stream's (StreamTampered) or the witness's. */
  readonly caughtBy: 'stream' | 'witness';
  /** What `/api/audit/verify` names. */
  readonly problem: string;
};

const TAMPERINGS: Record<string, Tampering> = {
  // The read model, rebuilt from the log (its last event is gone), lacks the deleted checkpoints'
  // leaves: its tree no longer extends the witnessed one, so the witness guard refuses first.
  'every checkpoint deleted': { sql: EVERY_CHECKPOINT, caughtBy: 'witness', problem: 'checkpoint-missing' },
  'every checkpoint deleted, restarted with an empty witness': {
    sql: EVERY_CHECKPOINT,
    emptyWitness: true,
    caughtBy: 'stream',
    problem: 'no-checkpoints',
  },
  // The tree up to the latest witnessed size is intact: the checkpoint stream's check refuses.
  'the latest checkpoint deleted': {
    sql: `DELETE FROM emt_messages WHERE global_position =
     (SELECT MAX(global_position) FROM emt_messages WHERE stream_id = 'ledger-checkpoints')`,
    caughtBy: 'stream',
    problem: 'checkpoint-missing',
  },
};

describe.each(storeKinds)('the checkpoint signer on a tampered log (%s)', (store) => {
  let t: TestApp;
  const { stream: logStream, lines } = logLines<LogLine>();
  beforeEach(async () => {
    lines.length = 0;
    t = await signingApp(store, logStream);
  });
  afterEach(() => t.dispose());

  it.each(Object.entries(TAMPERINGS))(
    'given %s, when the service ticks and stops, then it signs nothing, says so once and retries no conflict',
    async (_tampering, { sql, emptyWitness, caughtBy, problem }) => {
      for (let i = 0; i < 2; i++) {
        await givenProject(t);
        await t.running.services.ledger.checkpoint(true);
      }
      await t.stop();
      await onLogStore(store, t, sql);
      const kept = (await loggedEvents(t)).filter((e) => e.type === 'LedgerCheckpointSigned');

      const from = lines.length;
      t = await t.restart(
        emptyWitness ? { LEDGER_WITNESS_DIR: path.join(t.config.dataDir, 'witness-restarted') } : {},
      );
      const own = () => lines.slice(from);
      await expectSigningRefused(t, own, STOPPED, problem);

      const commands = t.running.ctx.commands;
      const beforeStop = commands.stats();
      await t.stop();
      const afterStop = commands.stats();

      // The stream's check: the one conflict that showed the stream beyond its events, none retried
      // since. The witness's: no command at all. The stop ran no command either way.
      expect(afterStop.conflicts).toBe(caughtBy === 'stream' ? 1 : 0);
      expect(afterStop.commands).toBe(beforeStop.commands);
      const refusals = own().filter((l) => STOPPED.test(l.msg));
      expect(refusals).toHaveLength(1);
      if (caughtBy === 'stream')
        expect(refusals[0]).toMatchObject({
          level: 50,
          msg: expect.stringMatching(REFUSED),
          err: { type: 'StreamTampered' },
        });
      else expect(refusals[0]).toMatchObject({ level: 50, msg: expect.stringMatching(CONTRADICTED) });
      expect(refusals[0]!.msg).toContain(
        caughtBy === 'stream' ? 'stream ledger-checkpoints: its events end at version' : 'the witness holds',
      );
      expect(own().filter((l) => /ledger checkpoint/.test(l.msg))).toEqual([]);
      // No checkpoint was appended over the tampered tree: the log holds those left after the tampering.
      const signed = (await loggedEvents(t)).filter((e) => e.type === 'LedgerCheckpointSigned');
      expect(signed.map((e) => e.position)).toEqual(kept.map((e) => e.position));
    },
    60_000,
  );
});
