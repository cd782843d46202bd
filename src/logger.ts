import pino, { type Logger } from 'pino';

/** Paths that may carry credentials; pino replaces them before a line is written. */
const redact = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.api_key',
  '*.token',
  '*.parameters.password',
];

export const createLogger = (level: string): Logger =>
  pino({ level, redact: { paths: redact, censor: '******' } });
