/**
 * The ledger in the running service, on both stores: the log's hash tree kept as events are
 * projected, checkpoints signed as the log grows, `npm run verify` and GET /api/audit/verify catching
 * an edited, deleted or inserted event and naming it, and proofs that an independent RFC 9162
 * implementation (below, written from the RFC, not from src/ledger) accepts.
 */
import crypto from 'node:crypto';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { postgresParameters } from '../support/external';
import { givenProject } from '../support/world';
import { onLogStore, verifyCli } from './logStore';

// ---- RFC 9162 §2.1.3.2 and §2.1.4.2, written from the RFC's pseudo-code ----
const node = (left: Buffer, right: Buffer) =>
  crypto
    .createHash('sha256')
    .update(Buffer.concat([Buffer.from([1]), left, right]))
    .digest();

const rfcInclusion = (leafHash: Buffer, index: number, size: number, proof: Buffer[], root: Buffer) => {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of proof) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = node(p, r);
      if (fn % 2 === 0)
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
    } else r = node(r, p);
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && r.equals(root);
};

const rfcConsistency = (
  first: number,
  second: number,
  firstRoot: Buffer,
  secondRoot: Buffer,
  proof: Buffer[],
) => {
  if (first === second) return proof.length === 0 && firstRoot.equals(secondRoot);
  const path = (first & (first - 1)) === 0 ? [firstRoot, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = first - 1;
  let sn = second - 1;
  while (fn % 2 === 1) {
    fn >>= 1;
    sn >>= 1;
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = node(c, fr);
      sr = node(c, sr);
      if (fn % 2 === 0)
        while (fn % 2 === 0 && fn !== 0) {
          fn >>= 1;
          sn >>= 1;
        }
    } else sr = node(sr, c);
    fn >>= 1;
    sn >>= 1;
  }
  return sn === 0 && fr.equals(firstRoot) && sr.equals(secondRoot);
};

const b64 = (s: string) => Buffer.from(s, 'base64');

type Checkpoints = { checkpoints: { tree_size: number; root_hash: string; last_position: number }[] };

/** `GET /api/audit/verify?progress=true`: its server-sent events, parsed. */
const verifyStreamed = async (t: TestApp, every: number) => {
  const res = await t.http.get(`/api/audit/verify?progress=true&every=${every}`).expect(200);
  expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
  return res.text
    .split('\n\n')
    .filter((chunk) => chunk.startsWith('data: '))
    .map((chunk) => JSON.parse(chunk.slice('data: '.length)) as Record<string, unknown>);
};

describe.each(storeKinds)('the audit ledger on %s', (store) => {
  let t: TestApp;
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
  });

  const checkpointsCovering = async (position: number) => {
    for (let i = 0; i < 200; i++) {
      const body = (await t.http.get('/api/audit/checkpoints').expect(200)).body as Checkpoints;
      if (body.checkpoints.some((c) => c.last_position >= position)) return body;
      await new Promise((r) => setTimeout(r, 50));
    }
    const signed = ((await t.http.get('/api/audit/checkpoints').expect(200)).body as Checkpoints).checkpoints;
    throw new Error(
      `no checkpoint covers position ${position}; signed: ${JSON.stringify(signed.map((c) => [c.tree_size, c.last_position]))}`,
    );
  };

  /**
   * A few projects, signed: the positions of their creation events. `signed`: how they come to be
   * covered. 'by-timer': the ledger's timer signs them as the log grows (what the first test is
   * about). 'now': after each project, the read model caught up and the ledger asked to sign at once,
   * as a clean stop asks it; the tests about what a signed log proves need its checkpoints, not the
   * two waits for a timer tick (about 100 ms each) the timer costs every test.
   */
  const givenSignedHistory = async (signed: 'by-timer' | 'now' = 'now') => {
    const created: number[] = [];
    for (let i = 0; i < 3; i++) {
      await givenProject(t);
      if (signed === 'now') {
        await t.running.ctx.projections.catchUp();
        await t.running.services.ledger.checkpoint(true);
      }
      await checkpointsCovering(0);
    }
    const events = (await t.http.get('/api/events?limit=1000').expect(200)).body.events as {
      position: number;
      type: string;
    }[];
    for (const e of events) if (e.type === 'ProjectCreated') created.push(e.position);
    // A checkpoint is an event too, but never the reason for another (an idle log would sign
    // forever): the history to cover ends at the last event that is not a checkpoint.
    const last = events.filter((e) => e.type !== 'LedgerCheckpointSigned').at(-1)!.position;
    return { created, checkpoints: await checkpointsCovering(last) };
  };

  it('signs checkpoints as the log grows, and verifies it intact (API and npm run verify)', async () => {
    const { checkpoints } = await givenSignedHistory('by-timer');
    expect(checkpoints.checkpoints.length).toBeGreaterThanOrEqual(2);
    const sizes = checkpoints.checkpoints.map((c) => c.tree_size);
    expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
    expect(new Set(sizes).size).toBe(sizes.length);

    const online = (await t.http.get('/api/audit/verify').expect(200)).body;
    expect(online).toMatchObject({ ok: true });
    expect(online.checkpointsVerified).toBeGreaterThanOrEqual(checkpoints.checkpoints.length);

    await t.stop();
    const offline = await verifyCli(t);
    expect(offline.stdout).toMatch(/log intact: \d+ events/);
    expect(offline.code).toBe(0);
  });

  it('streams its progress for a big log: start, progress every N events, then the result', async () => {
    await givenSignedHistory();
    // The streamed result must equal a whole verify of the same log and witness. A checkpoint the
    // ledger signs meanwhile (its timer runs on a loaded machine) changes both between two reads:
    // the pair is read again until a whole verify before and after the stream agree.
    const verifyWhole = async () => (await t.http.get('/api/audit/verify').expect(200)).body;
    let whole = await verifyWhole();
    let events = await verifyStreamed(t, 2);
    for (let tries = 0; tries < 5; tries++) {
      const after = await verifyWhole();
      if (JSON.stringify(after) === JSON.stringify(whole)) break;
      whole = after;
      events = await verifyStreamed(t, 2);
    }
    expect(events[0]).toMatchObject({ type: 'start', total_events: expect.any(Number) });
    const progress = events.filter((e) => e.type === 'progress');
    const counts = progress.map((p) => p.events as number);
    expect(counts.length).toBeGreaterThanOrEqual(Math.floor((whole.events as number) / 2));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(counts.at(-1)).toBe(whole.events);
    for (const p of progress) expect(p.total_events).toBeGreaterThanOrEqual(p.events as number);
    expect(events.at(-1)).toEqual({ type: 'result', ...whole });
    // Accept: text/event-stream asks for the same.
    const accepted = await t.http.get('/api/audit/verify').set('Accept', 'text/event-stream').expect(200);
    expect(accepted.headers['content-type']).toMatch(/^text\/event-stream/);
  });

  it('gives inclusion and consistency proofs an independent RFC 9162 implementation accepts', async () => {
    const { created, checkpoints } = await givenSignedHistory();
    const latest = checkpoints.checkpoints.at(-1)!;
    for (const position of created) {
      const proof = (await t.http.get(`/api/audit/proof/${position}`).expect(200)).body;
      expect(proof.tree_size).toBe(latest.tree_size);
      expect(proof.root_hash).toBe(latest.root_hash);
      expect(
        rfcInclusion(
          b64(proof.leaf_hash),
          proof.leaf_index,
          proof.tree_size,
          proof.inclusion_path.map(b64),
          b64(proof.root_hash),
        ),
      ).toBe(true);
      // The leaf is given (a project holds no secret): its RFC 6962 hash is the proven one.
      expect(
        crypto
          .createHash('sha256')
          .update(Buffer.concat([Buffer.from([0]), Buffer.from(proof.leaf, 'utf8')]))
          .digest('base64'),
      ).toBe(proof.leaf_hash);
      expect(JSON.parse(proof.leaf)).toMatchObject({ type: 'ProjectCreated', position: String(position) });
      // A proof for another leaf's hash does not pass.
      const forged = crypto.createHash('sha256').update('forged').digest();
      expect(
        rfcInclusion(
          forged,
          proof.leaf_index,
          proof.tree_size,
          proof.inclusion_path.map(b64),
          b64(proof.root_hash),
        ),
      ).toBe(false);
    }
    const first = checkpoints.checkpoints[0]!;
    const consistency = (await t.http.get(`/api/audit/consistency?from=${first.tree_size}`).expect(200)).body;
    expect(consistency).toMatchObject({
      first: first.tree_size,
      second: latest.tree_size,
      first_root: first.root_hash,
      second_root: latest.root_hash,
    });
    expect(
      rfcConsistency(
        first.tree_size,
        latest.tree_size,
        b64(first.root_hash),
        b64(latest.root_hash),
        consistency.consistency_path.map(b64),
      ),
    ).toBe(true);
    expect(
      rfcConsistency(
        first.tree_size,
        latest.tree_size,
        crypto.createHash('sha256').update('another history').digest(),
        b64(latest.root_hash),
        consistency.consistency_path.map(b64),
      ),
    ).toBe(false);
    const notCheckpoint = await t.http.get(`/api/audit/consistency?from=${latest.tree_size + 1000}`);
    expect(notCheckpoint.status).toBe(404);
  });

  it('withholds the leaf of an event that holds a secret, and proves its hash all the same', async () => {
    const name = `secret_db_${Date.now()}`;
    await t.http
      .post('/api/databases')
      .send({ database: { name, engine: 'postgres', parameters: postgresParameters() } })
      .expect(201);
    const registered = (await t.http.get(`/api/events?stream=database-${name}`).expect(200)).body.events[0];
    await givenProject(t);
    const { checkpoints } = await givenSignedHistory();
    const latest = checkpoints.checkpoints.at(-1)!;
    const proof = (await t.http.get(`/api/audit/proof/${registered.position}`).expect(200)).body;
    expect(proof.leaf).toBeUndefined();
    expect(JSON.stringify(proof)).not.toContain('any-password-trust-auth');
    expect(
      rfcInclusion(
        b64(proof.leaf_hash),
        proof.leaf_index,
        proof.tree_size,
        proof.inclusion_path.map(b64),
        b64(latest.root_hash),
      ),
    ).toBe(true);
  });

  it('signs what is unsigned at a clean stop', async () => {
    await givenSignedHistory();
    await t
      .restart({ LEDGER_CHECKPOINT_EVENTS: '1000000', LEDGER_CHECKPOINT_MS: '3600000' })
      .then(async (again) => {
        t = again;
      });
    await givenProject(t);
    const head = (await t.http.get('/api/events?limit=10000').expect(200)).body.events.at(-1)
      .position as number;
    const before = (await t.http.get('/api/audit/checkpoints').expect(200)).body as Checkpoints;
    expect(before.checkpoints.every((c) => c.last_position < head)).toBe(true);
    t = await t.restart();
    const after = (await t.http.get('/api/audit/checkpoints').expect(200)).body as Checkpoints;
    expect(after.checkpoints.at(-1)!.last_position).toBe(head);
  });

  const tamperings: [string, (positions: number[]) => string][] = [
    [
      'an edited event',
      ([p]) =>
        `UPDATE emt_messages SET message_data = replace(message_data${store === 'postgres' ? '::text' : ''}, 'proj', 'PROJ')${store === 'postgres' ? '::jsonb' : ''} WHERE global_position = ${p}`,
    ],
    ['a deleted event', ([p]) => `DELETE FROM emt_messages WHERE global_position = ${p}`],
    [
      'two events swapped (reordered)',
      ([a, b]) =>
        [
          `UPDATE emt_messages SET global_position = -1 WHERE global_position = ${a}`,
          `UPDATE emt_messages SET global_position = ${a} WHERE global_position = ${b}`,
          `UPDATE emt_messages SET global_position = ${b} WHERE global_position = -1`,
        ].join(';\n'),
    ],
  ];

  it.each(tamperings)(
    'catches %s, naming where the log stops being the one that was signed',
    async (_what, sql) => {
      const { created } = await givenSignedHistory();
      const target = created[1]!;
      await t.stop();
      await onLogStore(store, t, sql([target, created[2]!]));

      const offline = await verifyCli(t);
      expect(offline.code).toBe(1);
      expect(offline.stdout).toMatch(/log NOT intact: root-mismatch/);
      // Everything before the changed event is vouched for; the report names where trust ends.
      const verifiedUpTo = /everything up to position (\d+) verified/.exec(offline.stdout);
      if (verifiedUpTo) expect(Number(verifiedUpTo[1])).toBeLessThan(target);

      t = await t.restart();
      const online = (await t.http.get('/api/audit/verify').expect(200)).body;
      expect(online).toMatchObject({ ok: false, problem: 'root-mismatch' });
      expect(online.leafIndex).toBeLessThanOrEqual(created.indexOf(target) + 100);
      // Streamed, the same verdict comes as the last event.
      const streamed = await verifyStreamed(t, 1);
      expect(streamed.at(-1)).toEqual({ type: 'result', ...online });
    },
  );
});
