/**
 * A clean stop leaves the log signed whole: the checkpoint signed at stop covers every event but its
 * own (which its signature vouches for), so `npm run verify` on a stopped service finds nothing
 * unsigned; and an event edited afterwards is named by its own position (the leaf hashes the read
 * model recorded show which leaf changed), not by a range of leaves and a neighbouring position.
 */
import { verifyStoredLog } from '../../src/audit/verifyStored';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenProject, givenSkill } from '../support/world';
import { loggedEvents, onLogStore, verifyCli } from './logStore';

describe.each(storeKinds)('a clean stop and npm run verify (%s)', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    // Checkpoints only at the stop: what the stop signs is what this spec is about.
    t = await startTestApp(store, {
      LEDGER_CHECKPOINT_EVENTS: '1000000',
      LEDGER_CHECKPOINT_MS: '3600000',
      LEDGER_CHECKPOINT_ON_STOP: 'true',
    });
  });
  afterAll(() => t?.dispose());

  it('verifies whole after a clean stop, then names the position of the one event edited', async () => {
    const { name: project } = await givenProject(t);
    // Skills are answered ahead of the read model: the last writes may not be projected yet.
    for (const name of ['first', 'marked', 'last'])
      await givenSkill(t, project, { name, params: { note: `note-of-${name}` } });
    await t.stop();

    const events = await loggedEvents(t);
    const checkpoints = events.filter((e) => e.type === 'LedgerCheckpointSigned');
    expect(checkpoints).toHaveLength(1);
    // The one checkpoint, signed at the stop, covers every event before its own.
    expect(events.at(-1)!.type).toBe('LedgerCheckpointSigned');
    expect(checkpoints[0]!.data).toMatchObject({
      treeSize: events.length - 1,
      lastPosition: String(events.at(-2)!.position),
    });

    const whole = await verifyStoredLog(t.config);
    expect(whole).toMatchObject({
      ok: true,
      events: events.length,
      checkpointsVerified: 1,
      uncheckpointed: 0,
    });
    const cli = await verifyCli(t);
    expect(cli.code).toBe(0);
    expect(cli.stdout).toMatch(/^log intact: /);
    expect(cli.stdout).not.toMatch(/not yet signed/);

    const target = events.find(
      (e) => e.type === 'SkillCreated' && JSON.stringify(e.data).includes('note-of-marked'),
    )!.position;
    const json = store === 'postgres' ? '::text' : '';
    const back = store === 'postgres' ? '::jsonb' : '';
    await onLogStore(
      store,
      t,
      `UPDATE emt_messages SET message_data = replace(message_data${json}, 'note-of-marked', 'note-of-forged')${back} WHERE global_position = ${target}`,
    );

    const tampered = await verifyStoredLog(t.config);
    expect(tampered).toMatchObject({
      ok: false,
      problem: 'root-mismatch',
      position: target,
      exact: true,
    });
    const named = await verifyCli(t);
    expect(named.code).toBe(1);
    expect(named.stdout).toMatch(
      new RegExp(`log NOT intact: root-mismatch at leaf \\d+, position ${target}\\b`),
    );
    expect(named.stdout).not.toMatch(/or a later event/);
  });
});
