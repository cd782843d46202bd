import type {
  AgentCreated,
  ChatbotCreated,
  MindledgerEvent,
  ModelTrained,
  ModelTrainingStarted,
  ModelVersionActivated,
  ModelVersionDefined,
  ProjectCreated,
  SkillCreated,
} from '../../events';
import { projectAggregate } from '../../src/projects/aggregate';
import type { ProjectAggregate } from '../../src/shared/projectState';
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

/** The webhook token deciders are handed in chatbot specs (the service makes random ones). */
export const TOKEN = 'token-from-the-service';

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
    webhookToken: TOKEN,
    createdAt: at,
  },
});

export const projectSpec = <C>(decide: (command: C, state: ProjectAggregate) => readonly MindledgerEvent[]) =>
  deciderSpec<ProjectAggregate, C>({ ...projectAggregate, decide });

const modelBase = (name: string, version: number) => ({ projectId: 1, project: 'proj', name, version });

export const modelVersionDefined = (
  name: string,
  version = 1,
  options: Record<string, unknown> = {},
): ModelVersionDefined => ({
  type: 'ModelVersionDefined',
  data: {
    ...modelBase(name, version),
    engine: 'lightwood',
    target: 'y',
    query: 'SELECT * FROM rows',
    sourceDatabase: 'files',
    options,
    definedAt: at,
  },
});

export const modelTrainingStarted = (
  name: string,
  version = 1,
  trainer = 'node-1',
): ModelTrainingStarted => ({
  type: 'ModelTrainingStarted',
  data: { ...modelBase(name, version), trainer, startedAt: at },
});

export const modelTrained = (name: string, version = 1): ModelTrained => ({
  type: 'ModelTrained',
  data: {
    ...modelBase(name, version),
    artifactDigest: 'a'.repeat(64),
    accuracy: 0.9,
    metric: 'r2',
    columns: [{ name: 'x', dtype: 'float' }],
    rows: 10,
    trainingMs: 5,
    trainedAt: at,
  },
});

export const modelVersionActivated = (name: string, version = 1): ModelVersionActivated => ({
  type: 'ModelVersionActivated',
  data: { ...modelBase(name, version), activatedAt: at },
});

/** A model whose versions 1…n were each defined, trained and activated in turn. */
export const trainedModel = (name: string, versions = 1) =>
  Array.from({ length: versions }, (_, i) => [
    modelVersionDefined(name, i + 1),
    modelTrainingStarted(name, i + 1),
    modelTrained(name, i + 1),
    modelVersionActivated(name, i + 1),
  ]).flat();
