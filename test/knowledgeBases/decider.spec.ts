import type { KnowledgeBaseCreated } from '../../events';
import { decideKnowledgeBase, type KnowledgeBaseCommand } from '../../src/knowledgeBases/decider';
import { decideProject, type ProjectCommand } from '../../src/projects/decider';
import { at, now, projectCreated, projectSpec } from '../support/project';
import { projected } from '../support/projection';

const spec = projectSpec<KnowledgeBaseCommand>(decideKnowledgeBase);
const metadata = { now };
const definition = {
  embeddingModel: { provider: 'openai', model_name: 'e', api_key: 'sk-kb' },
  contentColumns: ['content'],
  metadataColumns: null,
  idColumn: 'id',
  params: {},
};
const kbCreated = (name: string): KnowledgeBaseCreated => ({
  type: 'KnowledgeBaseCreated',
  data: { projectId: 1, project: 'proj', name, ...definition, createdAt: at },
});

describe('knowledge base decider', () => {
  it('creates a knowledge base in its project, and deletes it by any spelling of its name', () => {
    spec
      .given([projectCreated])
      .when({
        type: 'CreateKnowledgeBase',
        data: { ...definition, name: 'kb1', ifNotExists: false },
        metadata,
      })
      .then([kbCreated('kb1')]);
    spec
      .given([projectCreated, kbCreated('kb1')])
      .when({ type: 'DeleteKnowledgeBase', data: { name: 'KB1', ifExists: false }, metadata })
      .then([{ type: 'KnowledgeBaseDeleted', data: { projectId: 1, kbId: 2, name: 'kb1', deletedAt: at } }]);
  });

  it('refuses duplicates (409) unless IF NOT EXISTS, unknown names (404) unless IF EXISTS, and bad chunking (400)', () => {
    const given = spec.given([projectCreated, kbCreated('kb1')]);
    given
      .when({
        type: 'CreateKnowledgeBase',
        data: { ...definition, name: 'Kb1', ifNotExists: false },
        metadata,
      })
      .thenThrows('Conflict', /already exists/);
    given
      .when({
        type: 'CreateKnowledgeBase',
        data: { ...definition, name: 'kb1', ifNotExists: true },
        metadata,
      })
      .then([]);
    given
      .when({ type: 'DeleteKnowledgeBase', data: { name: 'ghost', ifExists: false }, metadata })
      .thenThrows('NotFound', /ghost/);
    given.when({ type: 'DeleteKnowledgeBase', data: { name: 'ghost', ifExists: true }, metadata }).then([]);
    given
      .when({
        type: 'CreateKnowledgeBase',
        data: {
          ...definition,
          name: 'kb2',
          params: { chunk_size: 100, chunk_overlap: 100 },
          ifNotExists: false,
        },
        metadata,
      })
      .thenThrows('Invalid', /chunk_overlap/);
    given
      .when({
        type: 'CreateKnowledgeBase',
        data: { ...definition, name: 'kb3', idColumn: 'content', ifNotExists: false },
        metadata,
      })
      .thenThrows('Invalid', /both the id column and a content column/);
  });

  it("is deleted with its project, in the project's one atomic append", () => {
    projectSpec<ProjectCommand>(decideProject)
      .given([projectCreated, kbCreated('kb1')])
      .when({ type: 'DeleteProject', data: { name: 'proj' }, metadata })
      .then([
        { type: 'KnowledgeBaseDeleted', data: { projectId: 1, kbId: 2, name: 'kb1', deletedAt: at } },
        { type: 'ProjectDeleted', data: { projectId: 1, name: 'proj', deletedAt: at } },
      ]);
  });
});

describe('knowledge_bases table', () => {
  it('holds each knowledge base with its key masked, its size once documents arrive, and forgets deleted ones', async () => {
    const table = await projected([
      projectCreated,
      kbCreated('kb1'),
      kbCreated('kb2'),
      {
        type: 'KnowledgeBaseDocumentsInserted',
        data: {
          kbId: 2,
          project: 'proj',
          name: 'kb1',
          documentsDigest: 'a'.repeat(64),
          documents: 3,
          chunks: 4,
          chunking: { chunkSize: 1000, chunkOverlap: 200 },
          embedding: { kind: 'hashing', dimensions: 384 },
          insertedAt: at,
        },
      },
      { type: 'KnowledgeBaseDeleted', data: { projectId: 1, kbId: 3, name: 'kb2', deletedAt: at } },
    ]);
    expect(table('knowledge_bases')).toEqual([
      expect.objectContaining({
        ID: 2n,
        NAME: 'kb1',
        PROJECT: 'proj',
        EMBEDDING_MODEL: { provider: 'openai', model_name: 'e', api_key: '******' },
        CONTENT_COLUMNS: ['content'],
        ID_COLUMN: 'id',
        DIMENSIONS: 384,
        PROCESSED_ROWS: 3n,
      }),
    ]);
  });
});
