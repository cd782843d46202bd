import type { IncomingMessage, ServerResponse } from 'node:http';

/** How long a client is told to wait while the service starts. */
const STARTING_RETRY_AFTER_SECONDS = 5;

/**
 * What the HTTP port answers while the service starts: it opens its stores and catches its read
 * model up with the log, minutes on a long log or a rebuild. The port listens from the first moment,
 * so a client or an operator's probe is told what is happening and how far it has come, rather than
 * meeting a refused connection: every request, the probes too, is 503 with Retry-After naming the
 * log position the read model has reached (a probe still says "not yet": `/api/health` means
 * serving, and a second node waits for it). Nothing is read or written. The app takes the port
 * over once it is built (src/main.ts).
 */
export const startingAnswers =
  (position: () => bigint | null) =>
  (_req: IncomingMessage, res: ServerResponse): void => {
    const at = position();
    const detail =
      at === null
        ? 'The service is starting: it is opening its stores. Nothing was read or written. Retry shortly.'
        : `The service is starting: its read model is catching up with the log (it has applied it up to position ${at}). Nothing was read or written. Retry shortly.`;
    res.writeHead(503, {
      'content-type': 'application/problem+json',
      'cache-control': 'no-store',
      'retry-after': String(STARTING_RETRY_AFTER_SECONDS),
    });
    res.end(JSON.stringify({ title: 'Starting', detail, status: 503 }));
  };
