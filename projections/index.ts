import type { TableProjection } from '../src/projection/types';
import { databasesProjection } from './databases';
import { eventsProjection } from './events';
import { projectsProjection } from './projects';

/** Every DuckDB table the log feeds. Changing any definition triggers a rebuild on the next start. */
export const allProjections: readonly TableProjection[] = [
  eventsProjection,
  projectsProjection,
  databasesProjection,
];
