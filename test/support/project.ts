import type {
  AgentCreated,
  ChatbotCreated,
  MindledgerEvent,
  ProjectCreated,
  SkillCreated,
} from '../../events';
import { projectAggregate, type ProjectAggregate } from '../../src/projects/aggregate';
import { deciderSpec } from './decider';

export const now = new Date('2026-03-04T05:06:07.089Z');
export const at = now.toISOString();

/** The project every decider spec starts from: created at position 1. */
export const projectCreated: ProjectCreated = {
  type: 'ProjectCreated',
  data: { name: 'proj', createdAt: at },
};

export const skillCreated = (
  name: string,
  params: Record<string, unknown> = {},
  type = 'custom',
): SkillCreated => ({
  type: 'SkillCreated',
  data: { projectId: 1, project: 'proj', name, type, params, createdAt: at },
});

export const agentCreated = (
  name: string,
  skills: { skillId: number; parameters: Record<string, unknown> }[] = [],
  params: Record<string, unknown> = {},
): AgentCreated => ({
  type: 'AgentCreated',
  data: {
    projectId: 1,
    project: 'proj',
    name,
    modelName: 'gpt-4o',
    provider: 'openai',
    params,
    skills,
    createdAt: at,
  },
});

export const chatbotCreated = (
  name: string,
  agentId: number | null,
  params: Record<string, unknown> = {},
): ChatbotCreated => ({
  type: 'ChatbotCreated',
  data: {
    projectId: 1,
    project: 'proj',
    name,
    agentId,
    modelName: 'gpt-4o',
    databaseId: 99,
    databaseName: 'chat',
    params,
    isRunning: true,
    webhookToken: null,
    createdAt: at,
  },
});

export const projectSpec = <C>(decide: (command: C, state: ProjectAggregate) => readonly MindledgerEvent[]) =>
  deciderSpec<ProjectAggregate, C>({ ...projectAggregate, decide });
