import type { KnowledgeBaseDeleted, RecordedEvent } from '../../events';
import { findByName } from '../shared/params';
import { defineResourcesSlice, orNotFound, withoutResource, withResource } from '../shared/resourceState';
import type { ProjectRef } from '../shared/projectState';

export type KnowledgeBase = {
  readonly id: bigint;
  readonly name: string;
  /** As created, secrets included (the log's copy). */
  readonly embeddingModel: Record<string, unknown>;
  readonly contentColumns: readonly string[];
  readonly metadataColumns: readonly string[] | null;
  readonly idColumn: string;
  readonly params: Record<string, unknown>;
  readonly createdAt: string;
  readonly version: bigint;
};
export type KnowledgeBasesState = ReadonlyMap<bigint, KnowledgeBase>;

const evolveKnowledgeBases = (kbs: KnowledgeBasesState, event: RecordedEvent): KnowledgeBasesState => {
  switch (event.type) {
    case 'KnowledgeBaseCreated': {
      const d = event.data;
      const id = event.meta.position;
      return withResource(kbs, {
        id,
        name: d.name,
        embeddingModel: d.embeddingModel,
        contentColumns: d.contentColumns,
        metadataColumns: d.metadataColumns,
        idColumn: d.idColumn,
        params: d.params,
        createdAt: d.createdAt,
        version: id,
      });
    }
    case 'KnowledgeBaseDeleted':
      return withoutResource(kbs, event.data.kbId);
    default:
      return kbs;
  }
};

export const findKnowledgeBase = (kbs: KnowledgeBasesState, name: string) => findByName(kbs.values(), name);

export const requireKnowledgeBase = (kbs: KnowledgeBasesState, name: string): KnowledgeBase =>
  orNotFound(findKnowledgeBase(kbs, name), 'Knowledge base', name);

/** A knowledge base's documents: their own stream, so inserts never grow the project's stream. */
export const documentsStream = (kbId: bigint | number) => `kb-${kbId}`;

/** The event deleting `kb`: DROP KNOWLEDGE_BASE's and its project's deletion's. */
export const knowledgeBaseDeleted = (
  kb: KnowledgeBase,
  project: ProjectRef,
  at: string,
): KnowledgeBaseDeleted => ({
  type: 'KnowledgeBaseDeleted',
  data: { projectId: Number(project.id), kbId: Number(kb.id), name: kb.name, deletedAt: at },
});

export const knowledgeBasesSlice = defineResourcesSlice(
  'knowledgeBases',
  evolveKnowledgeBases,
  knowledgeBaseDeleted,
);

/** Chunking and search settings, from MindsDB's shapes (`params` or `preprocessing.text_chunking_config`). */
export const settingsOf = (kb: Pick<KnowledgeBase, 'params'>) => {
  const p = kb.params;
  const preprocessing = (p.preprocessing ?? {}) as Record<string, unknown>;
  const chunking = (preprocessing.text_chunking_config ?? {}) as Record<string, unknown>;
  const num = (...values: unknown[]) => {
    for (const v of values) {
      const n = typeof v === 'string' ? Number(v) : v;
      if (typeof n === 'number' && Number.isFinite(n)) return n;
    }
    return undefined;
  };
  return {
    chunkSize: Math.max(1, Math.floor(num(p.chunk_size, chunking.chunk_size) ?? 1000)),
    chunkOverlap: Math.max(0, Math.floor(num(p.chunk_overlap, chunking.chunk_overlap) ?? 200)),
    alpha: Math.min(1, Math.max(0, num(p.hybrid_search_alpha) ?? 0.5)),
  };
};
