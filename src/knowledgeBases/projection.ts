import fs from 'node:fs';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { RecordedOf } from '../../events';
import { hashingEmbed } from '../engines/search/hashingEmbedder';
import {
  compactPostingsSql,
  createKbTablesSql,
  dropKbTablesSql,
  fieldTypeOf,
  KB_SCHEMA,
  kbTables,
  widerFieldType,
  type FieldType,
} from '../engines/search/layout';
import { patchRow, projectResourceReads, projectResourceTable } from '../projection/resourceTable';
import { CREATED_AT, NAME_AND_PROJECT, RESOURCE_IDS } from '../projection/resourceColumns';
import { allHandled, schemaProjection, selectRow, type RowOf } from '../projection/table';
import { DELETED_KBS, KnownContentTables, MAX_HELD_ENTRIES } from './contentTables';
import { chunksOf, PendingChunks, type KbDocument } from './pendingChunks';
import { columns } from '../projection/columns';
import type { BatchScope, SchemaProjection, TableReader } from '../projection/types';
import { quoteString } from '../shared/quoting';
import { maskSecrets } from '../shared/secrets';
import type { BlobStore } from '../storage/blobs';

/** `knowledge_bases`: one row per knowledge base (MindsDB's information_schema.KNOWLEDGE_BASES columns first). */
export const knowledgeBasesTable = projectResourceTable({
  table: 'knowledge_bases',
  key: 'ID',
  history: true,
  columns: columns(
    NAME_AND_PROJECT,
    `EMBEDDING_MODEL JSON, METADATA_COLUMNS JSON NULL, CONTENT_COLUMNS JSON, ID_COLUMN VARCHAR,
    PARAMS JSON, INSERT_STARTED_AT TIMESTAMP NULL, INSERT_FINISHED_AT TIMESTAMP NULL,
    PROCESSED_ROWS BIGINT NULL`,
    RESOURCE_IDS,
    'DIMENSIONS INTEGER NULL',
    CREATED_AT,
    'VERSION BIGINT',
  ),
  handles: ['KnowledgeBaseCreated', 'KnowledgeBaseDeleted', 'KnowledgeBaseDocumentsInserted'],
  createdBy: {
    type: 'KnowledgeBaseCreated',
    cells: ({ data: d }) => ({
      EMBEDDING_MODEL: maskSecrets(d.embeddingModel),
      METADATA_COLUMNS: d.metadataColumns,
      CONTENT_COLUMNS: d.contentColumns,
      ID_COLUMN: d.idColumn,
      PARAMS: maskSecrets(d.params),
      INSERT_STARTED_AT: null,
      INSERT_FINISHED_AT: null,
      PROCESSED_ROWS: null,
      DIMENSIONS: null,
    }),
  },
  deletedBy: { type: 'KnowledgeBaseDeleted', key: (e) => BigInt(e.data.kbId) },
  // KnowledgeBaseDocumentsInserted: the vectors' size, when inserts began and last ended, the documents so far.
  apply: ({ data: d }, rows) =>
    patchRow(rows, BigInt(d.kbId), (row) => ({
      DIMENSIONS: d.embedding.dimensions,
      INSERT_STARTED_AT: row.INSERT_STARTED_AT ?? d.insertedAt,
      INSERT_FINISHED_AT: d.insertedAt,
      PROCESSED_ROWS: Number(row.PROCESSED_ROWS ?? 0) + d.documents,
    })),
});

export type KnowledgeBaseRow = RowOf<typeof knowledgeBasesTable.columns>;

export const knowledgeBaseRowsOfProject = projectResourceReads(knowledgeBasesTable).ofProject;

export const knowledgeBaseRow = async (reader: TableReader, id: bigint) =>
  selectRow(knowledgeBasesTable, reader, 'SELECT * FROM knowledge_bases WHERE ID = ?', [id]);

/** Documents and chunks a knowledge base holds (0 before its first insert). */
export const contentCounts = async (reader: TableReader, kbId: bigint) => {
  const t = kbTables(kbId);
  const exists = await reader.query(
    `SELECT 1 FROM duckdb_tables() WHERE schema_name = ${quoteString(KB_SCHEMA)} AND table_name = ${quoteString(`kb_${kbId}`)}`,
  );
  if (exists.length === 0) return { documents: 0, chunks: 0 };
  const [row] = (await reader.query(
    `SELECT count(DISTINCT DOC_ID) AS documents, count(*) AS chunks FROM ${t.chunks}`,
  )) as { documents: bigint; chunks: bigint }[];
  return { documents: Number(row?.documents ?? 0), chunks: Number(row?.chunks ?? 0) };
};

/**
 * A blob read at once (`readFileSync`): a replay reads thousands of small ones, where a promise's
 * read cost about ten times the CPU (50-70 µs against 5 µs each); what is done with the bytes next
 * (parsing, chunking, embedding) is synchronous and far longer anyway.
 */
const readDocuments = (file: string): KbDocument[] =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as KbDocument);

/** Vectors stored for a provider's embeddings: float32, little-endian, one row of `dimensions` per chunk. */
const readVectors = (file: string, dimensions: number): Float32Array[] => {
  const bytes = fs.readFileSync(file);
  const all = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const out: Float32Array[] = [];
  for (let i = 0; i + dimensions <= all.length; i += dimensions) out.push(all.slice(i, i + dimensions));
  return out;
};

/** The events that change the knowledge bases' content tables. */
const CONTENT_EVENTS = [
  'KnowledgeBaseDocumentsInserted',
  'KnowledgeBaseDocumentsDeleted',
  'KnowledgeBaseIndexed',
  'KnowledgeBaseDeleted',
] as const;

/**
 * Every knowledge base's content: its chunks with their vectors, and their terms, in schema
 * mdb_kb. Inserting a document id again replaces its chunks. Rebuilt from the log: documents from
 * their blob, vectors recomputed (the built-in embedder) or read from their blob (a provider's).
 * What the tables hold (which exist, the deleted list, each one's fields) is remembered per DuckDB
 * writer (contentTables.ts), not asked of DuckDB at every insert; so are, for the knowledge bases
 * whose tables it made, their documents and vocabulary, up to `maxHeldEntries` in all.
 */
export const knowledgeBaseContentProjection = (
  blobs: BlobStore,
  { maxHeldEntries = MAX_HELD_ENTRIES }: { readonly maxHeldEntries?: number } = {},
): SchemaProjection => {
  const knownBy = new WeakMap<DuckDBConnection, KnownContentTables>();
  const knownOf = (c: DuckDBConnection) => {
    let known = knownBy.get(c);
    if (!known) {
      known = new KnownContentTables(maxHeldEntries);
      knownBy.set(c, known);
    }
    return known;
  };
  const pending = new PendingChunks(knownOf);
  return schemaProjection({
    name: 'kb-content',
    // 3: terms by id (a vocabulary) and chunk row id, with the chunk's length.
    version: 3,
    handles: CONTENT_EVENTS,
    prepare: async (c) => {
      knownOf(c).reset();
      await c.run(`CREATE SCHEMA IF NOT EXISTS ${KB_SCHEMA}`);
      await c.run(`CREATE TABLE IF NOT EXISTS ${DELETED_KBS} (KB_ID BIGINT PRIMARY KEY)`);
    },
    apply: async (event, c, _log, batch) => {
      const known = knownOf(c);
      known.applying(event.meta.position);
      try {
        // What is remembered is read from DuckDB again: the statements waiting are there first.
        if (!known.loaded) await pending.runQueued(c, batch);
        await applyContent(event, { c, known, pending, batch }, blobs);
      } catch (error) {
        known.forget();
        throw error;
      }
    },
    finish: async (c, batch) => {
      try {
        await pending.appendAll(c, batch);
      } catch (error) {
        knownOf(c).forget();
        throw error;
      }
    },
    drop: async (c) => {
      knownOf(c).reset();
      await c.run(`DROP SCHEMA IF EXISTS ${KB_SCHEMA} CASCADE`);
    },
  });
};

/** What applying one event works with: the writer, what its tables hold, what waits for the batch's end. */
type ContentWork = {
  readonly c: DuckDBConnection;
  readonly known: KnownContentTables;
  readonly pending: PendingChunks;
  readonly batch: BatchScope;
};

const applyContent = async (
  event: RecordedOf<(typeof CONTENT_EVENTS)[number]>,
  { c, known, pending, batch }: ContentWork,
  blobs: BlobStore,
) => {
  switch (event.type) {
    case 'KnowledgeBaseDocumentsInserted': {
      const d = event.data;
      // An insert that lost the race with the knowledge base's deletion leaves nothing behind.
      if (await known.isDeleted(c, d.kbId)) return;
      const documents = readDocuments(await blobs.ensureLocal(d.documentsDigest, 'jsonl'));
      const chunks = chunksOf(documents, d.chunking);
      const vectors =
        d.embedding.kind === 'hashing'
          ? hashingEmbed(
              chunks.map((ch) => ch.content),
              d.embedding.dimensions,
            )
          : readVectors(await blobs.ensureLocal(d.embedding.vectorsDigest, 'f32'), d.embedding.dimensions);
      if (vectors.length !== chunks.length)
        throw new Error(`knowledge base ${d.name}: ${chunks.length} chunks but ${vectors.length} vectors`);
      // The tables made (when they are not there) and the fields widened: run with the batch's
      // others before anything touches its tables (PendingChunks.later).
      const { hadChunks, missing, hadNone } = await known.noteTables(c, d.kbId);
      const made = missing ? createKbTablesSql(d.kbId, d.embedding.dimensions) : [];
      const widened = await widenFields(c, known, d.kbId, documents, () =>
        pending.runQueued(c, batch, d.kbId),
      );
      pending.later(batch, d.kbId, [...made, ...widened], missing && hadNone);
      // A chunks table made in this batch holds no document to replace.
      if (hadChunks) {
        const ids = [...new Set(documents.map((doc) => doc.id))];
        pending.forgetWaiting(batch, d.kbId, ids);
        await deleteDocuments(c, known, d.kbId, ids, () => pending.runQueued(c, batch, d.kbId));
      }
      await pending.add(c, batch, d.kbId, d.embedding.dimensions, {
        position: event.meta.position,
        chunks,
        vectors,
      });
      return;
    }
    case 'KnowledgeBaseDocumentsDeleted':
      if (await known.hasChunks(c, event.data.kbId)) {
        pending.forgetWaiting(batch, event.data.kbId, event.data.ids);
        await deleteDocuments(c, known, event.data.kbId, event.data.ids, () =>
          pending.runQueued(c, batch, event.data.kbId),
        );
      }
      return;
    case 'KnowledgeBaseIndexed':
      // Every posting recorded before the event is compacted, whatever batch a replay puts it in:
      // the rows are the same either way, and so is their order.
      if (await known.hasChunks(c, event.data.kbId)) {
        await pending.append(c, batch, event.data.kbId);
        await c.run(compactPostingsSql(event.data.kbId));
      }
      return;
    case 'KnowledgeBaseDeleted': {
      pending.discard(batch, event.data.kbId);
      // Tables this batch was to make are never made; tables made before are dropped.
      const neverMade = pending.dropQueued(batch, event.data.kbId);
      const made = !neverMade && (await known.hasTables(c, event.data.kbId));
      if (made) await c.run(dropKbTablesSql(event.data.kbId).join(';\n'));
      if (!(await known.isDeleted(c, event.data.kbId))) pending.deletedLater(batch, event.data.kbId);
      await known.deleted(c, event.data.kbId);
      return;
    }
    default:
      return allHandled(event);
  }
};

/**
 * The metadata fields the documents have, with the type each is offered as in SQL: widened by
 * every insert (never narrowed by a deletion, so a column's type never changes under a query).
 * The statements that write the fields changed (none when none did), for the caller to run; the
 * fields remembered are changed at once (a failure to run them forgets them: contentTables.ts).
 * A field's row is replaced by a deletion and an insert: the fields table has no key (a key's index
 * on each knowledge base's table made a replay's commits many times slower), and tables made
 * before still have one, which the same statements serve.
 */
const widenFields = async (
  c: DuckDBConnection,
  known: KnownContentTables,
  kbId: number,
  documents: readonly KbDocument[],
  runQueued: () => Promise<void>,
): Promise<string[]> => {
  const t = kbTables(kbId);
  const fields = await known.fields(c, kbId, async () => {
    await runQueued();
    return new Map(
      (await c.runAndReadAll(`SELECT FIELD, TYPE FROM ${t.fields}`))
        .getRows()
        .map((r) => [String(r[0]), r[1] === null ? null : (String(r[1]) as FieldType)] as const),
    );
  });
  const next = new Map(fields);
  for (const doc of documents)
    for (const [field, value] of Object.entries(doc.metadata))
      next.set(field, widerFieldType(next.get(field) ?? null, fieldTypeOf(value)));
  const changed = [...next].filter(([field, type]) => !(fields.has(field) && fields.get(field) === type));
  if (changed.length === 0) return [];
  const replaced = changed.filter(([field]) => fields.has(field));
  for (const [field, type] of changed) fields.set(field, type);
  return [
    ...(replaced.length > 0
      ? [
          `DELETE FROM ${t.fields} WHERE FIELD IN (${replaced.map(([field]) => quoteString(field)).join(', ')})`,
        ]
      : []),
    `INSERT INTO ${t.fields} VALUES ${changed
      .map(([field, type]) => `(${quoteString(field)}, ${type === null ? 'NULL' : quoteString(type)})`)
      .join(', ')}`,
  ];
};

/**
 * Deletes the documents' chunks and their terms (the knowledge base's tables exist). Documents
 * inserted are mostly new: the terms, tens of rows a chunk, are searched only when a chunk is there
 * (known without a query when the knowledge base is held: contentTables.ts).
 */
const deleteDocuments = async (
  c: DuckDBConnection,
  known: KnownContentTables,
  kbId: number,
  ids: readonly string[],
  runQueued: () => Promise<void>,
) => {
  if (ids.length === 0) return;
  const held = known.held(kbId);
  if (held && !ids.some((id) => held.documents.has(id))) return;
  await runQueued();
  const t = kbTables(kbId);
  const list = ids.map(quoteString).join(', ');
  if (!held) {
    const found = await c.runAndReadAll(`SELECT 1 FROM ${t.chunks} WHERE DOC_ID IN (${list}) LIMIT 1`);
    if (found.getRows().length === 0) return;
  }
  await c.run(
    `DELETE FROM ${t.terms} WHERE ROW_ID IN (SELECT ROW_ID FROM ${t.chunks} WHERE DOC_ID IN (${list}))`,
  );
  await c.run(`DELETE FROM ${t.chunks} WHERE DOC_ID IN (${list})`);
  known.removed(kbId, ids);
};
