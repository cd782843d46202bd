import type { TableProjection } from '../src/projection/types';
import { agentsProjection } from './agents';
import { chatbotsProjection } from './chatbots';
import { databasesProjection } from './databases';
import { eventsProjection } from './events';
import { filesProjection } from './files';
import { modelsProjection } from './models';
import { projectsProjection } from './projects';
import { skillsProjection } from './skills';

/**
 * Every DuckDB table the log feeds, in the order they apply each event (a projection may read the
 * rows of those before it). Changing any definition triggers a rebuild on the next start.
 */
export const allProjections: readonly TableProjection[] = [
  eventsProjection,
  projectsProjection,
  databasesProjection,
  skillsProjection,
  agentsProjection,
  chatbotsProjection,
  filesProjection,
  modelsProjection,
];

export { fileTablesProjection } from './files';
