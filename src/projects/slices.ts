import { agentsSlice } from '../agents/state';
import { chatbotsSlice } from '../chatbots/state';
import { jobsSlice } from '../jobs/state';
import { knowledgeBasesSlice } from '../knowledgeBases/state';
import { modelsSlice } from '../models/state';
import { skillsSlice } from '../skills/state';
import { viewsSlice } from '../views/state';
import { triggersSlice } from '../triggers/state';

/**
 * Everything a project's stream holds besides the project itself, one slice per kind of resource.
 * The project aggregate folds every event through each of them, and deleting a project records
 * each slice's cascade in the reverse of this order (what refers to others goes first: chatbots
 * before the agents they use, agents before their skills), then the project's own deletion.
 * A new kind of resource in projects is one line here.
 */
export const projectSlices = [
  modelsSlice,
  knowledgeBasesSlice,
  skillsSlice,
  agentsSlice,
  chatbotsSlice,
  jobsSlice,
  viewsSlice,
  triggersSlice,
] as const;
