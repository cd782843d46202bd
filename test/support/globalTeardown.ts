import { dropPooledDatabases } from './postgres';
import { removeScratch } from './tmpfs';

/** Jest's global tear-down: the scratch directory and the pooled PostgreSQL databases go. */
export default async () => {
  removeScratch();
  await dropPooledDatabases();
};
