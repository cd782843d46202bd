import type { EventContract } from './contract';
import { databaseContracts } from './databases';
import { projectLifecycleContracts } from './projects';

export * from './contract';
export * from './projects';
export * from './databases';

/** Every event type the log may hold. A type missing here cannot be appended. */
export const allContracts: readonly EventContract[] = [...projectLifecycleContracts, ...databaseContracts];
