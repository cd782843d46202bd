import type { KnowledgeBaseCreated, KnowledgeBaseDeleted } from '../../events';
import { requireLiveProject, type ProjectState } from '../projects/state';
import { conflict, invalid } from '../shared/errors';
import { findKnowledgeBase, requireKnowledgeBase, settingsOf, type KnowledgeBasesState } from './state';

export type KnowledgeBaseDecisionState = {
  readonly project: ProjectState;
  readonly knowledgeBases: KnowledgeBasesState;
};

type Now = { now: Date };
export type KnowledgeBaseCommand =
  | {
      type: 'CreateKnowledgeBase';
      data: Omit<KnowledgeBaseCreated['data'], 'projectId' | 'project' | 'createdAt'> & {
        ifNotExists: boolean;
      };
      metadata: Now;
    }
  | { type: 'DeleteKnowledgeBase'; data: { name: string; ifExists: boolean }; metadata: Now };

export const decideKnowledgeBase = (
  command: KnowledgeBaseCommand,
  state: KnowledgeBaseDecisionState,
): (KnowledgeBaseCreated | KnowledgeBaseDeleted)[] => {
  const project = requireLiveProject(state.project);
  const at = command.metadata.now.toISOString();
  switch (command.type) {
    case 'CreateKnowledgeBase': {
      const { ifNotExists, ...d } = command.data;
      if (findKnowledgeBase(state.knowledgeBases, d.name)) {
        if (ifNotExists) return [];
        throw conflict(`Knowledge base with name ${d.name} already exists`, 'Knowledge base already exists');
      }
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
      return [
        {
          type: 'KnowledgeBaseCreated',
          data: { projectId: Number(project.id), project: project.name, ...d, createdAt: at },
        },
      ];
    }
    case 'DeleteKnowledgeBase': {
      const kb = findKnowledgeBase(state.knowledgeBases, command.data.name);
      if (!kb) {
        if (command.data.ifExists) return [];
        requireKnowledgeBase(state.knowledgeBases, command.data.name);
        return [];
      }
      return [
        {
          type: 'KnowledgeBaseDeleted',
          data: { projectId: Number(project.id), kbId: Number(kb.id), name: kb.name, deletedAt: at },
        },
      ];
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
};
