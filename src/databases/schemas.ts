import { z } from 'zod';
import { resourceName } from '../shared/names';

export const databaseParams = z.object({ database: z.string().min(1) });

const parameters = z.record(z.string(), z.unknown());

export const createDatabaseBody = z.object({
  database: z.object(
    {
      name: resourceName('Database'),
      // Checked after the name (MindsDB answers 409 for a taken name before anything else).
      engine: z.string().optional().describe('postgres, mysql or mariadb (required)'),
      parameters: parameters.optional(),
    },
    { error: 'Must provide "database" parameter in POST body' },
  ),
  check_connection: z.boolean().optional(),
});

export const updateDatabaseBody = z.object({
  database: z.object(
    {
      engine: z.string().min(1).optional(),
      parameters: parameters.optional(),
    },
    { error: 'Must provide "database" parameter in PUT body' },
  ),
  check_connection: z.boolean().optional(),
});

export const databaseView = z.object({
  name: z.string(),
  type: z.enum(['system', 'project', 'data']),
  id: z.number().int().nullable(),
  engine: z.string().nullable(),
  visible: z.boolean(),
  deletable: z.boolean(),
  class_type: z.string().optional(),
  connection_data: z.record(z.string(), z.unknown()).optional().describe('Secrets are shown as "******"'),
  permanent: z.boolean().optional(),
  date_last_update: z.string().optional(),
});
export type DatabaseView = z.infer<typeof databaseView>;
