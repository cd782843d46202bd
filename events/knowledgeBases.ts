import { z } from 'zod';
import { defineEvent, freeFormObject, type EventOf, type ResourceDeclaration } from './contract';

const knowledgeBaseResource: ResourceDeclaration = { kind: 'knowledgeBase', id: 'kbId' };

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * A knowledge base's definition, in its project's stream (names unique in the project; the
 * project's deletion removes it). `embeddingModel` may hold an API key: only the log has it.
 */
export const KnowledgeBaseCreated = defineEvent(
  'KnowledgeBaseCreated',
  z.object({
    projectId: z.number().int(),
    project: z.string(),
    name: z.string(),
    embeddingModel: freeFormObject(),
    contentColumns: z.array(z.string()),
    /** Null: every column that is neither the id nor content. */
    metadataColumns: z.array(z.string()).nullable(),
    idColumn: z.string(),
    params: freeFormObject(),
    createdAt: z.iso.datetime(),
  }),
  { resource: knowledgeBaseResource },
);
export const KnowledgeBaseDeleted = defineEvent(
  'KnowledgeBaseDeleted',
  z.object({
    projectId: z.number().int(),
    kbId: z.number().int(),
    name: z.string(),
    deletedAt: z.iso.datetime(),
  }),
  { resource: knowledgeBaseResource },
);

/**
 * Documents inserted into a knowledge base, on the knowledge base's own stream (`kb-<id>`): the
 * documents themselves are a content-addressed blob (JSON lines of {id, content, metadata}), so the
 * log stays small. Chunks are cut on replay by the recorded settings. Vectors are derived data:
 * recomputed on replay when the embedding model is the built-in deterministic one, otherwise read
 * from a content-addressed blob of float32s (a replay never calls the provider again).
 */
export const KnowledgeBaseDocumentsInserted = defineEvent(
  'KnowledgeBaseDocumentsInserted',
  z.object({
    kbId: z.number().int(),
    project: z.string(),
    name: z.string(),
    documentsDigest: sha256,
    documents: z.number().int().min(0),
    chunks: z.number().int().min(0),
    chunking: z.object({ chunkSize: z.number().int().min(1), chunkOverlap: z.number().int().min(0) }),
    embedding: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('hashing'), dimensions: z.number().int().min(1) }),
      z.object({
        kind: z.literal('stored'),
        dimensions: z.number().int().min(1),
        vectorsDigest: sha256,
        provider: z.string(),
        model: z.string(),
      }),
    ]),
    insertedAt: z.iso.datetime(),
  }),
  { resource: knowledgeBaseResource },
);
export const KnowledgeBaseDocumentsDeleted = defineEvent(
  'KnowledgeBaseDocumentsDeleted',
  z.object({ kbId: z.number().int(), ids: z.array(z.string()), deletedAt: z.iso.datetime() }),
  { resource: knowledgeBaseResource },
);

/**
 * CREATE INDEX ON KNOWLEDGE_BASE: the knowledge base's postings are rewritten in term-id order (so
 * a search reads its terms' postings from a few row groups, not from every one). Recorded, so a
 * rebuild of the read model compacts at the same point of the log; postings inserted after it are
 * appended unsorted until the next.
 */
export const KnowledgeBaseIndexed = defineEvent(
  'KnowledgeBaseIndexed',
  z.object({ kbId: z.number().int(), indexedAt: z.iso.datetime() }),
  { resource: knowledgeBaseResource },
);

export type KnowledgeBaseCreated = EventOf<typeof KnowledgeBaseCreated>;
export type KnowledgeBaseDeleted = EventOf<typeof KnowledgeBaseDeleted>;
export type KnowledgeBaseDocumentsInserted = EventOf<typeof KnowledgeBaseDocumentsInserted>;
export type KnowledgeBaseDocumentsDeleted = EventOf<typeof KnowledgeBaseDocumentsDeleted>;
export type KnowledgeBaseIndexed = EventOf<typeof KnowledgeBaseIndexed>;
export type KnowledgeBaseEvent =
  | KnowledgeBaseCreated
  | KnowledgeBaseDeleted
  | KnowledgeBaseDocumentsInserted
  | KnowledgeBaseDocumentsDeleted
  | KnowledgeBaseIndexed;
export const knowledgeBaseContracts = [
  KnowledgeBaseCreated,
  KnowledgeBaseDeleted,
  KnowledgeBaseDocumentsInserted,
  KnowledgeBaseDocumentsDeleted,
  KnowledgeBaseIndexed,
] as const;
