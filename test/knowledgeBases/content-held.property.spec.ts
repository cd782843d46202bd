/**
 * The knowledge bases' content projection holds, for the knowledge bases whose tables it made, their
 * documents and vocabulary (src/knowledgeBases/contentTables.ts `HeldContent`), so an insert neither
 * asks DuckDB whether it replaces a document nor reads the vocabulary for its terms. The promise:
 * whatever documents are inserted, replaced, deleted and compacted, and knowledge bases dropped, in
 * whatever batches, the tables hold row for row what they hold when nothing is held and every answer
 * is asked of DuckDB (the code before), including when the bound on what is held is passed part way
 * and a knowledge base is held no longer. The projection runs on in-memory DuckDBs, the documents in
 * a real blob store; each batch is one transaction, finished as the runner finishes it.
 * Kill check: documents appended but not noted as held (an insert then replaces nothing), caught.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { RecordedEvent } from '../../events';
import { HASHING_DIMENSIONS } from '../../src/engines/search/hashingEmbedder';
import { KB_SCHEMA } from '../../src/engines/search/layout';
import { KnownContentTables } from '../../src/knowledgeBases/contentTables';
import { knowledgeBaseContentProjection } from '../../src/knowledgeBases/projection';
import { openBlobStore, type BlobStore } from '../../src/storage/blobs';
import { methodReplaced } from '../support/killChecks';
import { expectCaught, propertyRuns, propertySeed } from '../support/seed';

const RUNS = 25;
const SEED = propertySeed();
const TIMEOUT_MS = 120_000;

let blobs: BlobStore;
let dir: string;
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-content-held-'));
  blobs = await openBlobStore(dir);
});
afterAll(async () => {
  await blobs.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const WORDS = ['refund', 'shipping', 'days', 'order', 'express', 'café', '返品', 'late', 'box'];
const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 12 }).map((w) => w.join(' '));
const kbIds = fc.constantFrom(1, 2);
const docIds = fc.constantFrom('d0', 'd1', 'd2', 'd3');
const score = fc.oneof(fc.integer({ min: 0, max: 9 }), fc.constant(1.5), fc.constant('high'));

type Step =
  | { insert: { kbId: number; docs: { id: string; content: string; score: number | string }[] } }
  | { remove: { kbId: number; ids: string[] } }
  | { index: number }
  | { drop: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      insert: fc.record({
        kbId: kbIds,
        docs: fc.array(fc.record({ id: docIds, content: text, score }), { minLength: 1, maxLength: 3 }),
      }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      remove: fc.record({ kbId: kbIds, ids: fc.uniqueArray(docIds, { minLength: 1, maxLength: 2 }) }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ index: kbIds }) },
  { weight: 1, arbitrary: fc.record({ drop: kbIds }) },
);

const world = fc.record({
  steps: fc.array(step, { minLength: 1, maxLength: 12 }),
  batchSize: fc.constantFrom(1, 2, 3, 100),
  /** What may be held in all: small bounds are passed part way. */
  maxHeldEntries: fc.constantFrom(3, 12, 40, 1_000_000),
});

type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

/** Stores the documents of an insert as its blob, as the service does (one JSON line each). */
const storedDocuments = async (docs: readonly { id: string; content: string; metadata: object }[]) => {
  const body = docs.map((d) => JSON.stringify(d)).join('\n') + '\n';
  const digest = crypto.createHash('sha256').update(body).digest('hex');
  const temp = path.join(dir, `${crypto.randomUUID()}.jsonl`);
  fs.writeFileSync(temp, body);
  await blobs.put(temp, digest, 'jsonl');
  fs.rmSync(temp, { force: true });
  return digest;
};

/** The steps as recorded events, positions 1, 2, … (only what the content projection reads). */
const eventsOf = async (steps: readonly Step[]): Promise<RecordedEvent[]> => {
  const at = '2026-11-30T00:00:00.000Z';
  const events: RecordedEvent[] = [];
  for (const [i, s] of steps.entries()) {
    const meta = { position: BigInt(i + 1) };
    if ('insert' in s) {
      const byId = new Map<string, { id: string; content: string; metadata: object }>();
      for (const d of s.insert.docs) {
        byId.delete(d.id);
        byId.set(d.id, { id: d.id, content: d.content, metadata: { score: d.score } });
      }
      const docs = [...byId.values()];
      events.push({
        type: 'KnowledgeBaseDocumentsInserted',
        data: {
          kbId: s.insert.kbId,
          project: 'p',
          name: `kb${s.insert.kbId}`,
          documentsDigest: await storedDocuments(docs),
          documents: docs.length,
          chunks: docs.length,
          chunking: { chunkSize: 30, chunkOverlap: 5 },
          embedding: { kind: 'hashing', dimensions: HASHING_DIMENSIONS },
          insertedAt: at,
        },
        meta,
      } as unknown as RecordedEvent);
    } else if ('remove' in s)
      events.push({
        type: 'KnowledgeBaseDocumentsDeleted',
        data: { kbId: s.remove.kbId, ids: s.remove.ids, deletedAt: at },
        meta,
      } as unknown as RecordedEvent);
    else if ('index' in s)
      events.push({
        type: 'KnowledgeBaseIndexed',
        data: { kbId: s.index, indexedAt: at },
        meta,
      } as unknown as RecordedEvent);
    else
      events.push({
        type: 'KnowledgeBaseDeleted',
        data: { kbId: s.drop },
        meta,
      } as unknown as RecordedEvent);
  }
  return events;
};

/** Every row of every table of schema mdb_kb, each table's rows sorted: equal when the tables are, row for row. */
const contentRows = async (c: DuckDBConnection) => {
  const tables = (
    await c.runAndReadAll(
      `SELECT table_name FROM duckdb_tables() WHERE schema_name = '${KB_SCHEMA}' ORDER BY 1`,
    )
  )
    .getRows()
    .map((r) => String(r[0]));
  const out: Record<string, string[]> = {};
  for (const table of tables)
    out[table] = (await c.runAndReadAll(`SELECT * FROM ${KB_SCHEMA}."${table}"`))
      .getRows()
      .map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)))
      .sort();
  return out;
};

/** The events applied by a content projection holding up to `maxHeldEntries`, in batches of `batchSize`. */
const projected = async (events: readonly RecordedEvent[], batchSize: number, maxHeldEntries: number) => {
  const instance = await DuckDBInstance.create(':memory:');
  const c = await instance.connect();
  try {
    const projection = knowledgeBaseContentProjection(blobs, { maxHeldEntries });
    await projection.prepare(c);
    for (let from = 0; from < events.length; from += batchSize) {
      const batch = {};
      await c.run('BEGIN TRANSACTION');
      for (const event of events.slice(from, from + batchSize))
        await projection.apply(event, c, undefined as never, batch);
      await projection.finish?.(c, batch);
      await c.run('COMMIT');
    }
    return await contentRows(c);
  } finally {
    c.closeSync();
    instance.closeSync();
  }
};

/** Held or not, in whatever batches, the same rows as one event a batch with nothing held. */
const heldEqualsAsked = async ({ steps, batchSize, maxHeldEntries }: World) => {
  const events = await eventsOf(steps);
  const asked = await projected(events, 1, 0);
  const held = await projected(events, batchSize, maxHeldEntries);
  expect(held).toEqual(asked);
};

it(
  'given documents inserted, replaced, deleted and compacted and knowledge bases dropped, in any batches, when the projection holds what its tables hold, then the tables equal, row for row, those written with every answer asked of DuckDB',
  async () => {
    await fc.assert(fc.asyncProperty(world, heldEqualsAsked), { seed: SEED, numRuns: propertyRuns(RUNS) });
  },
  TIMEOUT_MS,
);

it(
  'kill check: documents appended but not noted as held (an insert then replaces nothing), caught',
  async () => {
    const restore = methodReplaced(
      KnownContentTables.prototype,
      'appended',
      (original) => (kbId, _documents, terms) => original(kbId, [], terms),
    );
    try {
      await expectCaught(fc.asyncProperty(world, heldEqualsAsked), {
        seed: SEED,
        numRuns: propertyRuns(RUNS),
      });
    } finally {
      restore();
    }
  },
  TIMEOUT_MS,
);
