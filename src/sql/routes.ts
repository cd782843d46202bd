import { z } from 'zod';
import type { Api } from '../http/api';
import { LINE_FORMATS, LineWriter, type LineFormat } from '../http/lineStream';
import { sliceTexts, type SliceState } from '../http/slicedJson';
import type { SqlAnswer, SqlContext, StreamAnswer } from './answers';
import { SqlErrorCode, toSqlError } from './errors';
import type { SqlService } from './service';

const INVALID_FORMAT = `Invalid stream format: response_format is ${LINE_FORMATS.map((f) => `"${f}"`).join(' or ')} (or absent, for one JSON answer)`;

const queryBody = z.object({
  query: z.string({ error: 'Please provide "query" with the request (a string).' }),
  context: z.object({ db: z.string().optional() }).catchall(z.unknown()).optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  // The message never quotes what was sent (it may be huge, or hold a NUL).
  response_format: z
    .enum(LINE_FORMATS, { error: INVALID_FORMAT })
    .nullish()
    .describe(
      'Stream the answer (MindsDB v26): "jsonlines" (application/jsonlines) or "sse" (text/event-stream); see docs/sql.md "Streaming answers"',
    ),
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

/**
 * What the route needs of the SQL service: `stream` streams SELECTs as DuckDB reads them (or
 * answers whole what it cannot stream).
 */
export type SqlPort = Pick<SqlService, 'execute'> & {
  stream?: (...args: Parameters<SqlService['stream']>) => Promise<StreamAnswer | SqlAnswer>;
};

/** The rows of an answer whole in hand, as chunks the size DuckDB's are. */
async function* chunksOf(data: unknown[][]) {
  for (let i = 0; i < data.length; i += 2048) yield data.slice(i, i + 2048);
}

/** A failure while the rows were read (the stream's error carries its code), as an error answer. */
const errorLine = (error: unknown, context: SqlContext) => {
  const code = (error as { error_code?: unknown } | null)?.error_code;
  const e =
    typeof code === 'number' && error instanceof Error ? { code, message: error.message } : toSqlError(error);
  return { type: 'error', error_code: e.code, error_message: e.message, context };
};

/**
 * A streamed answer (see docs/sql.md, "Streaming answers"): a table as a first line naming its
 * columns, then lines of rows (each a JSON array of consecutive rows, about 64 KB of text), written
 * as DuckDB reads them and as the socket drains; a last line if the rows were cut (row or size limit)
 * or failed. The first line waits for the first rows, so a query failing at its first read answers
 * one error line, as any answer other than a table does. A client that goes away stops the reading
 * (the route's signal interrupts the query; the rows' iterator is returned).
 */
const writeStreamed = async (writer: LineWriter, answer: StreamAnswer | SqlAnswer): Promise<void> => {
  if (answer.type !== 'table') return writer.write(JSON.stringify(answer));
  const { column_names, column_types, context } = answer;
  const header = () => writer.write(JSON.stringify({ type: 'table', column_names, column_types, context }));
  const rows = 'rows' in answer ? answer.rows : chunksOf(answer.data);
  let sent = 0;
  let started = false;
  const slices: SliceState = { count: 64 };
  try {
    for await (const chunk of rows) {
      if (!started) {
        started = true;
        await header();
      }
      for (const text of sliceTexts(chunk, slices)) {
        if (writer.gone) break;
        await writer.write(text);
      }
      sent += chunk.length;
      // Leaving the loop returns the iterator: the reader goes back to the pool.
      if (writer.gone) return;
    }
  } catch (error) {
    if (writer.gone) return;
    return writer.write(JSON.stringify(errorLine(error, context)));
  }
  if (!started) await header();
  const cut = 'rows' in answer ? answer.truncated() : answer.truncated === true;
  if (cut)
    await writer.write(
      JSON.stringify({
        truncated: true,
        rows: sent,
        message: `The answer was cut after ${sent} rows: it reached the server's row or size limit (SQL_ROW_LIMIT, SQL_MAX_ANSWER_BYTES)`,
      }),
    );
};

export const sqlRoutes = (api: Api, sql: SqlPort) =>
  api.add({
    method: 'post',
    path: '/api/sql/query',
    tag: 'sql',
    summary: 'Run one statement: MindsDB SQL over the DuckDB projections (always 200 once the body is valid)',
    body: queryBody,
    responses: {
      200: {
        description:
          'A table, ok, or an error with a code; with response_format, the same as JSON lines or server-sent events',
        schema: answer,
      },
    },
    handle: async ({ body, signal, request }) => {
      const format: LineFormat | null | undefined = body.response_format;
      const context = body.context ?? {};
      const params = body.params ?? {};
      if (!format)
        return {
          status: 200,
          body: await sql.execute(body.query, context, params, signal),
          // Cells were converted to JSON values when read (sql/values.ts).
          jsonSafe: true,
        };
      const res = request.res;
      if (!res) throw new Error('The response of a request is not at hand');
      const writer = new LineWriter(res, format);
      const streamed = sql.stream
        ? await sql.stream(body.query, context, params, signal)
        : await sql.execute(body.query, context, params, signal);
      try {
        await writeStreamed(writer, streamed);
      } catch (error) {
        // Never thrown by the writer; a bug here still ends the answer with a line naming it.
        if (!writer.gone)
          await writer.write(
            JSON.stringify({
              type: 'error',
              error_code: SqlErrorCode.Internal,
              error_message: (error as Error).message,
              context,
            }),
          );
      }
      writer.end();
      // Sent already: the API layer's end() of an ended response sends nothing.
      return { status: 200 };
    },
  });
