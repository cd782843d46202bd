import { agentContracts } from './agents';
import { chatbotContracts } from './chatbots';
import type { EventContract } from './contract';
import { databaseContracts } from './databases';
import { fileContracts } from './files';
import { modelContracts } from './models';
import { projectLifecycleContracts } from './projects';
import { skillContracts } from './skills';

export * from './contract';
export * from './projects';
export * from './databases';
export * from './skills';
export * from './agents';
export * from './chatbots';
export * from './files';
export * from './models';

/** Every event type the log may hold. A type missing here cannot be appended. */
export const allContracts: readonly EventContract[] = [
  ...projectLifecycleContracts,
  ...databaseContracts,
  ...skillContracts,
  ...agentContracts,
  ...chatbotContracts,
  ...fileContracts,
  ...modelContracts,
];
