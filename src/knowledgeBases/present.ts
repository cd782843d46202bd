import { toMindsDbTimestamp } from '../shared/time';
import type { KnowledgeBaseRow } from './projection';

const json = (text: string | null) => (text === null ? null : (JSON.parse(text) as unknown));

/** A knowledge base as MindsDB's `as_dict` shows it, with what it holds (secrets masked by the projection). */
export const presentKnowledgeBase = (r: KnowledgeBaseRow, counts: { documents: number; chunks: number }) => ({
  id: Number(r.ID),
  name: r.NAME,
  project_id: Number(r.PROJECT_ID),
  embedding_model: json(r.EMBEDDING_MODEL),
  reranking_model: null,
  vector_database: null,
  vector_database_table: null,
  storage: null,
  metadata_columns: json(r.METADATA_COLUMNS),
  content_columns: json(r.CONTENT_COLUMNS),
  id_column: r.ID_COLUMN,
  params: json(r.PARAMS),
  created_at: toMindsDbTimestamp(r.CREATED_AT),
  updated_at: toMindsDbTimestamp(r.INSERT_FINISHED_AT ?? r.CREATED_AT),
  dimensions: r.DIMENSIONS,
  documents: counts.documents,
  chunks: counts.chunks,
});
