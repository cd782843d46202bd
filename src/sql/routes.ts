import { z } from 'zod';
import type { Api } from '../http/api';
import type { SqlService } from './service';

const queryBody = z.object({
  query: z.string({ error: 'Please provide "query" with the request (a string).' }),
  context: z.object({ db: z.string().optional() }).catchall(z.unknown()).optional(),
  params: z.record(z.string(), z.unknown()).optional(),
});

const answer = z.object({
  type: z.enum(['table', 'ok', 'error']),
  column_names: z.array(z.string()).optional(),
  column_types: z.array(z.string()).optional().describe('DuckDB types of the columns (beyond MindsDB)'),
  data: z.array(z.array(z.unknown())).optional(),
  truncated: z.literal(true).optional().describe('Present when the answer was cut at the row limit'),
  affected_rows: z.number().int().nullable().optional(),
  error_code: z.number().int().optional(),
  error_message: z.string().optional(),
  context: z.record(z.string(), z.unknown()),
});

export const sqlRoutes = (api: Api, sql: Pick<SqlService, 'execute'>) =>
  api.add({
    method: 'post',
    path: '/api/sql/query',
    tag: 'sql',
    summary: 'Run one statement: MindsDB SQL over the DuckDB projections (always 200 once the body is valid)',
    body: queryBody,
    responses: { 200: { description: 'A table, ok, or an error with a code', schema: answer } },
    handle: async ({ body, signal }) => ({
      status: 200,
      body: await sql.execute(body.query, body.context ?? {}, body.params ?? {}, signal),
      // Cells were converted to JSON values when read (sql/values.ts).
      jsonSafe: true,
    }),
  });
