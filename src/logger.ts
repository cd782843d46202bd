import pino, { type Logger } from 'pino';

/**
 * Paths that may carry credentials; pino replaces them before a line is written. Request and
 * response bodies are never logged at all (see the access-log serializers in app.ts).
 */
const redact = ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'];

/**
 * JSON lines to stdout (or a file), written asynchronously so logging never
 * blocks a request; `flushLogger` runs on shutdown so the last lines are not lost.
 */
export const createLogger = (level: string, dest: string | number = 1): Logger =>
  pino({ level, redact: { paths: redact, censor: '******' } }, pino.destination({ dest, sync: false }));

export const flushLogger = (logger: Logger) => {
  try {
    logger.flush();
  } catch {
    // A destination that is already closed has nothing left to flush.
  }
};
