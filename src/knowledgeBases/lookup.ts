import type { AppContext } from '../context';
import type { ProjectDirectory } from '../shared/projectDirectory';
import { loadProject } from '../projectCommand';
import { requireKnowledgeBase } from './state';

/**
 * A knowledge base by project and name, as the project's stream holds it now (a 404 for either
 * unknown). Every operation on a knowledge base starts here, so it is shared rather than repeated.
 */
export const knowledgeBaseLookup = (ctx: AppContext, projects: ProjectDirectory) => {
  const load = async (projectName: string, name: string) => {
    const project = await projects.require(projectName);
    const state = await loadProject(ctx, projects, project.name);
    return { project, kb: requireKnowledgeBase(state.knowledgeBases, name) };
  };
  return load;
};

export type LoadKnowledgeBase = ReturnType<typeof knowledgeBaseLookup>;
