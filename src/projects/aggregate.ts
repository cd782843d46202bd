import { evolveAgents, type AgentsState } from '../agents/decider';
import { evolveChatbots, type ChatbotsState } from '../chatbots/decider';
import type { Aggregate } from '../eventlog/commands';
import { evolveModels, type ModelsState } from '../models/decider';
import { nameKey } from '../shared/names';
import { evolveSkills, type SkillsState } from '../skills/decider';
import { evolveProject, initialProjectState, type ProjectState } from './decider';

/**
 * A project's stream holds the project's own lifecycle and everything it contains: the project is
 * the consistency boundary, so names stay unique inside it, references between its skills, agents,
 * chatbots and models are checked against one consistent state, and a cascading change is one
 * atomic append.
 */
export type ProjectAggregate = {
  readonly project: ProjectState;
  readonly skills: SkillsState;
  readonly agents: AgentsState;
  readonly chatbots: ChatbotsState;
  readonly models: ModelsState;
};

export const projectAggregate: Aggregate<ProjectAggregate> = {
  initialState: () => ({
    project: initialProjectState(),
    skills: new Map(),
    agents: new Map(),
    chatbots: new Map(),
    models: new Map(),
  }),
  evolve: (state, event) => {
    // A project that is deleted and created again starts empty.
    if (event.type === 'ProjectCreated')
      return { ...projectAggregate.initialState(), project: evolveProject(state.project, event) };
    return {
      project: evolveProject(state.project, event),
      skills: evolveSkills(state.skills, event),
      agents: evolveAgents(state.agents, event),
      chatbots: evolveChatbots(state.chatbots, event),
      models: evolveModels(state.models, event),
    };
  },
};

export const projectStream = (name: string) => `project-${nameKey(name)}`;

/** Whether the project has a model of this name (any version, any status). */
export const projectHasModel = (state: ProjectAggregate, modelName: string): boolean =>
  state.models.has(nameKey(modelName));
