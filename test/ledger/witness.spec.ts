/**
 * Issue 36: deleting the log's checkpoints no longer disables tamper evidence. Every checkpoint a
 * node sees is appended to its witness (LEDGER_WITNESS_DIR, an append-only file outside the log);
 * `npm run verify` (`--witness <dir>`, by default the configured one) and GET /api/audit/verify
 * compare the log with it: a witnessed checkpoint missing from the log, a log shorter than a
 * witnessed size or a witnessed root the leaves do not rebuild is a failure, not "intact".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenProject } from '../support/world';
import { onLogStore, verifyCli } from './logStore';

type Checkpoints = { checkpoints: { tree_size: number; root_hash: string; last_position: number }[] };
type Witnessed = { tree_size: number; root_hash: string; position: string; note: string };

// Each run of the verify program starts a process (tsx): a few of them per spec.
const SLOW = 240_000;

const witnessLines = (t: TestApp): Witnessed[] =>
  fs
    .readFileSync(path.join(t.config.ledger.witnessDir, 'checkpoints.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Witnessed);

describe.each(storeKinds)('the ledger witness on %s', (store) => {
  let t: TestApp;
  const copies: string[] = [];
  beforeEach(async () => {
    t = await startTestApp(store, {
      LEDGER_CHECKPOINT_EVENTS: '1',
      // The ledger signs on its timer (every min(1 s, this)), and each test waits for a checkpoint
      // four times or more: the least the setting takes (100 ms), not 200.
      LEDGER_CHECKPOINT_MS: '100',
      LEDGER_CHECKPOINT_ON_STOP: 'true',
    });
  });
  afterEach(async () => {
    await t.dispose();
    for (const c of copies.splice(0)) fs.rmSync(c, { recursive: true, force: true });
  });

  const checkpointsCovering = async (position: number) => {
    for (let i = 0; i < 200; i++) {
      const body = (await t.http.get('/api/audit/checkpoints').expect(200)).body as Checkpoints;
      if (body.checkpoints.some((c) => c.last_position >= position)) return body;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no checkpoint covers position ${position}`);
  };

  /** A few projects, each signed and witnessed, then the node stopped: the projects' positions. */
  const givenWitnessedHistory = async () => {
    for (let i = 0; i < 3; i++) {
      await givenProject(t);
      await checkpointsCovering(0);
    }
    const events = (await t.http.get('/api/events?limit=1000').expect(200)).body.events as {
      position: number;
      type: string;
    }[];
    const created = events.filter((e) => e.type === 'ProjectCreated').map((e) => e.position);
    await checkpointsCovering(events.filter((e) => e.type !== 'LedgerCheckpointSigned').at(-1)!.position);
    await t.stop();
    return created;
  };

  /** A copy of the witness, as an auditor keeps one elsewhere. */
  const witnessCopy = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-witness-copy-'));
    copies.push(dir);
    fs.copyFileSync(
      path.join(t.config.ledger.witnessDir, 'checkpoints.jsonl'),
      path.join(dir, 'checkpoints.jsonl'),
    );
    return dir;
  };

  it(
    '(c) an untouched log verifies intact against its witness (CLI and API)',
    async () => {
      await givenWitnessedHistory();
      const witnessed = witnessLines(t);
      expect(witnessed.length).toBeGreaterThanOrEqual(1);
      const sizes = witnessed.map((w) => w.tree_size);
      expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
      for (const w of witnessed) expect(w.note).toContain(`\n${w.tree_size}\n${w.root_hash}\n`);

      const offline = await verifyCli(t);
      expect(offline.stdout).toMatch(/log intact: \d+ events/);
      expect(offline.stdout).toContain(`${witnessed.length} witnessed checkpoints matched`);
      expect(offline.code).toBe(0);
      const explicit = await verifyCli(t, [
        '--witness',
        witnessCopy(),
        '--witness',
        t.config.ledger.witnessDir,
      ]);
      expect(explicit.code).toBe(0);

      t = await t.restart();
      const online = (await t.http.get('/api/audit/verify').expect(200)).body;
      expect(online).toMatchObject({ ok: true });
      expect(online.witnesses.checkpoints).toBeGreaterThanOrEqual(witnessed.length);
    },
    SLOW,
  );

  it(
    '(a) every checkpoint deleted and an event edited: fails naming the missing checkpoint',
    async () => {
      const created = await givenWitnessedHistory();
      const witnessed = witnessLines(t);
      const kept = witnessCopy();
      const cast = store === 'postgres' ? ['::text', '::jsonb'] : ['', ''];
      await onLogStore(
        store,
        t,
        `DELETE FROM emt_messages WHERE stream_id = 'ledger-checkpoints';
       UPDATE emt_messages SET message_data = replace(message_data${cast[0]}, 'proj', 'PROJ')${cast[1]} WHERE global_position = ${created[1]}`,
      );

      // With no witness, a log long enough to have had checkpoints and holding none fails too.
      const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-witness-empty-'));
      copies.push(empty);
      const unsigned = await verifyCli(t, ['--witness', empty], { LEDGER_CHECKPOINT_EVENTS: '1' });
      expect(unsigned.code).toBe(1);
      expect(unsigned.stdout).toMatch(/log NOT intact: no-checkpoints/);

      const offline = await verifyCli(t, ['--witness', kept]);
      expect(offline.code).toBe(1);
      expect(offline.stdout).toMatch(/log NOT intact: checkpoint-missing/);
      expect(offline.stdout).toContain(
        `tree size ${witnessed[0]!.tree_size} (root ${witnessed[0]!.root_hash}`,
      );

      t = await t.restart();
      const online = (await t.http.get('/api/audit/verify').expect(200)).body;
      expect(online).toMatchObject({ ok: false, problem: 'checkpoint-missing' });
      expect(online.missingCheckpoints.map((m: { treeSize: number }) => m.treeSize)).toEqual(
        expect.arrayContaining(witnessed.map((w) => w.tree_size)),
      );
      expect(online.detail).toContain(`tree size ${witnessed[0]!.tree_size}`);
    },
    SLOW,
  );

  it(
    '(b) the log cut below a witnessed size: fails',
    async () => {
      const created = await givenWitnessedHistory();
      const witnessed = witnessLines(t);
      await onLogStore(store, t, `DELETE FROM emt_messages WHERE global_position > ${created[0]}`);

      const offline = await verifyCli(t);
      expect(offline.code).toBe(1);
      expect(offline.stdout).toMatch(/log NOT intact: checkpoint-missing/);
      expect(offline.stdout).toMatch(
        /log-truncated: A checkpoint signed at .* covers \d+ events; the log holds \d+/,
      );
      expect(offline.stdout).toContain(`tree size ${witnessed.at(-1)!.tree_size}`);

      t = await t.restart();
      const online = (await t.http.get('/api/audit/verify').expect(200)).body;
      expect(online).toMatchObject({ ok: false, problem: 'checkpoint-missing' });
    },
    SLOW,
  );
});
