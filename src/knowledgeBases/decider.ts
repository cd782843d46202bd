import type { KnowledgeBaseCreated, KnowledgeBaseDeleted } from '../../events';
import { requireLiveProject, type ProjectState } from '../shared/projectState';
import { conflict, invalid } from '../shared/errors';
import { decideByType, type Now } from '../shared/decision';
import { findKnowledgeBase, requireKnowledgeBase, settingsOf, type KnowledgeBasesState } from './state';

type KnowledgeBaseDecisionState = {
  readonly project: ProjectState;
  readonly knowledgeBases: KnowledgeBasesState;
};

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

const createKnowledgeBase = (
  command: Command<'CreateKnowledgeBase'>,
  state: KnowledgeBaseDecisionState,
): KnowledgeBaseCreated[] => {
  const project = requireLiveProject(state.project);
  const at = command.metadata.now.toISOString();
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

const deleteKnowledgeBase = (
  command: Command<'DeleteKnowledgeBase'>,
  state: KnowledgeBaseDecisionState,
): KnowledgeBaseDeleted[] => {
  const project = requireLiveProject(state.project);
  const at = command.metadata.now.toISOString();
  if (command.data.ifExists && !findKnowledgeBase(state.knowledgeBases, command.data.name)) return [];
  const kb = requireKnowledgeBase(state.knowledgeBases, command.data.name);
  return [
    {
      type: 'KnowledgeBaseDeleted',
      data: { projectId: Number(project.id), kbId: Number(kb.id), name: kb.name, deletedAt: at },
    },
  ];
};

export const decideKnowledgeBase = decideByType<
  KnowledgeBaseCommand,
  KnowledgeBaseDecisionState,
  KnowledgeBaseCreated | KnowledgeBaseDeleted
>({ CreateKnowledgeBase: createKnowledgeBase, DeleteKnowledgeBase: deleteKnowledgeBase });
