/**
 * A call proved, end to end: call → its event → a signed checkpoint → the inclusion proof verifies
 * (by hand, as an auditor would, and with verify_call) and the answer the client holds hashes to the
 * recorded hash; an answer that is not the one given, or an event edited in the log's store
 * afterwards, fails. Also the caps: rows and characters, `truncated` said and recorded.
 */
import crypto from 'node:crypto';
import pg from 'pg';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { canonicalJson, verifyCheckpoint, verifyInclusion } from '../../src/ledger';
import { hashLeafText } from '../../src/ledger/hashing';
import { storeKinds, type TestApp } from '../support/app';
import { onLogStore } from '../ledger/logStore';
import { uniqueName } from '../support/world';
import { call, eventAt, receiptOf, rowsOf, startMcpWorld, textOf, type McpWorld } from './support';

const answerHash = (result: object) => {
  const { _meta: _m, ...answer } = result as Record<string, unknown>;
  void _m;
  return crypto
    .createHash('sha256')
    .update(canonicalJson(answer) ?? '')
    .digest('hex');
};

type Verification = {
  verified: boolean;
  pending?: boolean;
  checks?: { leaf_in_signed_tree: boolean; checkpoint_signature: boolean; answer_hash: boolean | null };
  reason?: string;
};

describe.each(storeKinds)('a call proved against the signed tree (%s)', (store) => {
  let world: McpWorld;
  let t: TestApp;
  let client: Client;

  beforeAll(async () => {
    world = await startMcpWorld(store, { MCP_MAX_ROWS: '5', MCP_MAX_CHARS: '1000' });
    ({ t, client } = world);
  });
  afterAll(() => world?.dispose());

  const verify = async (args: Record<string, unknown>) =>
    (await call(client, 'verify_call', args)).structuredContent as unknown as Verification;

  it('given a call, when the next checkpoint covers it, then its proof verifies and so does its answer; an edited event fails', async () => {
    const marker = uniqueName('proved');
    const result = await call(client, 'query', { query: `SELECT '${marker}' AS m` });
    const receipt = receiptOf(result);
    expect(receipt.answer_hash).toBe(answerHash(result));

    // Before a checkpoint covers it: pending, not a failure.
    expect(await verify({ position: receipt.position })).toMatchObject({ verified: false, pending: true });

    await t.running.services.ledger.checkpoint(true);

    // By hand, as an auditor: the proof from the audit API, the signed checkpoint, the public key.
    const proof = (await t.http.get(receipt.proof).expect(200)).body as {
      leaf: string;
      leaf_index: number;
      tree_size: number;
      leaf_hash: string;
      root_hash: string;
      inclusion_path: string[];
      checkpoint: string;
    };
    const leaf = JSON.parse(proof.leaf) as {
      type: string;
      stream: string;
      data: { sql: string; answerHash: string };
    };
    expect(leaf).toMatchObject({ type: 'McpCallRecorded', stream: receipt.stream });
    expect(leaf.data).toMatchObject({ sql: `SELECT '${marker}' AS m`, answerHash: answerHash(result) });
    const leafHash = hashLeafText(proof.leaf);
    expect(leafHash.toString('base64')).toBe(proof.leaf_hash);
    expect(
      verifyInclusion(
        leafHash,
        proof.leaf_index,
        proof.tree_size,
        proof.inclusion_path.map((h) => Buffer.from(h, 'base64')),
        Buffer.from(proof.root_hash, 'base64'),
      ),
    ).toBe(true);
    const { public_key } = (await t.http.get('/api/audit/checkpoints').expect(200)).body as {
      public_key: { pem: string };
    };
    expect(verifyCheckpoint(proof.checkpoint, public_key.pem)).toMatchObject({ ok: true });

    // With the tool: every check passes for the answer the client holds …
    expect(await verify(receipt.verify.arguments)).toMatchObject({
      verified: true,
      checks: { leaf_in_signed_tree: true, checkpoint_signature: true, answer_hash: true },
    });
    // … and an answer that is not the one given fails.
    const other = answerHash({ ...result, content: [{ type: 'text', text: 'something else' }] });
    expect(await verify({ position: receipt.position, answer_hash: other })).toMatchObject({
      verified: false,
      checks: { leaf_in_signed_tree: true, answer_hash: false },
    });

    // Someone with access to the store edits the recorded statement: the call no longer verifies.
    const cast = store === 'postgres' ? ['::text', '::jsonb'] : ['', ''];
    await onLogStore(
      store,
      t,
      `UPDATE emt_messages SET message_data = replace(message_data${cast[0]}, '${marker}', 'forged')${cast[1]} WHERE global_position = ${receipt.position}`,
    );
    const edited = await eventAt(t, receipt.position);
    expect((edited!.data as { sql: string }).sql).toBe("SELECT 'forged' AS m");
    const after = await verify(receipt.verify.arguments);
    expect(after).toMatchObject({ verified: false, checks: { leaf_in_signed_tree: false } });
    expect(after.reason).toMatch(/changed after it was recorded/);
  });

  // A record commits while an older transaction of the log's database still runs (another append
  // in flight: seen under CI's load). Readers in the log's order stay behind that transaction; the
  // record is committed all the same, and its receipt names it: never "not an MCP call".
  if (store === 'postgres')
    it('given an older transaction still running, a call just answered is found: the read model behind, then pending, then proved', async () => {
      const older = new pg.Client({ connectionString: t.config.eventStoreUrl });
      await older.connect();
      let position: number;
      try {
        await older.query('BEGIN');
        await older.query('SELECT pg_current_xact_id()');
        const result = await call(client, 'query', { query: `SELECT '${uniqueName('behind')}' AS m` });
        position = receiptOf(result).position;
        expect(await t.running.ctx.log.readPage({ after: BigInt(position) - 1n, limit: 1 })).toEqual([]);
        expect((await eventAt(t, position)).type).toBe('McpCallRecorded');
        // The tree is built from the read model, which waits for the older transaction: retry shortly.
        const behind = await call(client, 'verify_call', { position });
        expect(behind.structuredContent).toMatchObject({
          type: 'error',
          error_message: expect.stringMatching(/^Read model behind: .*Retry shortly/),
        });
      } finally {
        await older.query('ROLLBACK');
        await older.end();
      }
      expect(await verify({ position })).toMatchObject({ verified: false, pending: true });
      await t.running.services.ledger.checkpoint(true);
      expect(await verify({ position })).toMatchObject({ verified: true });
    });

  it('refuses to verify what is not an MCP call', async () => {
    expect(await verify({ position: 1 })).toMatchObject({
      verified: false,
      reason: expect.stringMatching(/not an MCP call/),
    });
  });

  it('caps an answer at MCP_MAX_ROWS rows and MCP_MAX_CHARS characters, saying truncated, and records it', async () => {
    const file = uniqueName('caps');
    const csv = `n,s\n${Array.from({ length: 40 }, (_, i) => `${i},${'x'.repeat(400)}`).join('\n')}\n`;
    await t.http.put(`/api/files/${file}`).attach('file', Buffer.from(csv), `${file}.csv`).expect(200);

    const byRows = await call(client, 'query', { query: `SELECT n FROM files.${file} ORDER BY n` });
    expect(rowsOf(byRows).map((r) => r.n)).toEqual([0, 1, 2, 3, 4]);
    expect(byRows.structuredContent).toMatchObject({ row_count: 5, truncated: true });
    expect(textOf(byRows)).toMatch(
      /showing 5 of 40 rows: an answer carries at most 5 rows \(MCP_MAX_ROWS\); ask with LIMIT\/OFFSET for more/,
    );

    const byChars = await call(client, 'query', { query: `SELECT n, s FROM files.${file} ORDER BY n` });
    const kept = rowsOf(byChars);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(5);
    expect(
      JSON.stringify({ column_names: ['n', 's'], data: kept.map((r) => [r.n, r.s]) }).length,
    ).toBeLessThanOrEqual(1000);
    expect(byChars.structuredContent).toMatchObject({ truncated: true });
    expect(textOf(byChars).length).toBeLessThanOrEqual(1000);

    const small = await call(client, 'query', { query: `SELECT count(*) AS c FROM files.${file}` });
    expect(small.structuredContent).toMatchObject({ data: [[40]], truncated: false });

    for (const [result, rows, truncated] of [
      [byRows, 5, true],
      [byChars, kept.length, true],
      [small, 1, false],
    ] as const) {
      const event = await eventAt(t, receiptOf(result).position);
      expect(event.data).toMatchObject({ rowCount: rows, truncated });
    }
  });
});
