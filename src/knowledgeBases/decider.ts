import type { KnowledgeBaseCreated, KnowledgeBaseDeleted } from '../../events';
import type { ProjectAggregate } from '../shared/projectState';
import { conflict, invalid } from '../shared/errors';
import { decideInProject, deletionByName, type Now, type ProjectRule } from '../shared/decision';
import { findKnowledgeBase, knowledgeBaseDeleted, requireKnowledgeBase, settingsOf } from './state';

type KnowledgeBaseDecisionState = Pick<ProjectAggregate, 'project' | 'knowledgeBases'>;

export type KnowledgeBaseCommand =
  | {
      type: 'CreateKnowledgeBase';
      data: Omit<KnowledgeBaseCreated['data'], 'projectId' | 'project' | 'createdAt'> & {
        ifNotExists: boolean;
      };
      metadata: Now;
    }
  | { type: 'DeleteKnowledgeBase'; data: { name: string; ifExists: boolean }; metadata: Now };

type Command<T extends KnowledgeBaseCommand['type']> = Extract<KnowledgeBaseCommand, { type: T }>;
type KnowledgeBaseEvent = KnowledgeBaseCreated | KnowledgeBaseDeleted;
type Decide<T extends KnowledgeBaseCommand['type']> = ProjectRule<
  KnowledgeBaseCommand,
  T,
  KnowledgeBaseDecisionState,
  KnowledgeBaseEvent
>;

/** Content to embed, an id apart from it, and chunks that move forward. */
const checkDefinition = (d: Omit<Command<'CreateKnowledgeBase'>['data'], 'ifNotExists'>) => {
  if (d.contentColumns.length === 0)
    throw invalid('content_columns names no column', 'Invalid knowledge base');
  if (d.contentColumns.includes(d.idColumn))
    throw invalid(`${d.idColumn} is both the id column and a content column`, 'Invalid knowledge base');
  const { chunkSize, chunkOverlap } = settingsOf(d);
  if (chunkOverlap >= chunkSize)
    throw invalid(
      `chunk_overlap (${chunkOverlap}) must be less than chunk_size (${chunkSize})`,
      'Invalid knowledge base',
    );
};

const createKnowledgeBase: Decide<'CreateKnowledgeBase'> = (command, state, { project, at }) => {
  const { ifNotExists, ...d } = command.data;
  if (findKnowledgeBase(state.knowledgeBases, d.name)) {
    if (ifNotExists) return [];
    throw conflict(`Knowledge base with name ${d.name} already exists`, 'Knowledge base already exists');
  }
  checkDefinition(d);
  return [
    {
      type: 'KnowledgeBaseCreated',
      data: { projectId: Number(project.id), project: project.name, ...d, createdAt: at },
    },
  ];
};

const deleteKnowledgeBase: Decide<'DeleteKnowledgeBase'> = (command, state, { project, at }) =>
  deletionByName(state.knowledgeBases, command.data, requireKnowledgeBase, (kb) =>
    knowledgeBaseDeleted(kb, project, at),
  );

export const decideKnowledgeBase = decideInProject<
  KnowledgeBaseCommand,
  KnowledgeBaseDecisionState,
  KnowledgeBaseEvent
>({
  CreateKnowledgeBase: createKnowledgeBase,
  DeleteKnowledgeBase: deleteKnowledgeBase,
});
