import { Writable } from 'node:stream';

/** An app's log as a spec reads it: the stream to log to and the lines logged so far. */
export type LoggedLines<T = { level: number; msg: string }> = {
  readonly stream: Writable;
  readonly lines: T[];
};

/**
 * Every line an app logs, parsed (pino writes one JSON object a line): `stream` to give the app
 * (`startTestApp(…, { logStream })`), `lines` filling as it logs. `T` names the fields a spec reads.
 */
export const logLines = <T = { level: number; msg: string }>(): LoggedLines<T> => {
  const lines: T[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(JSON.parse(line) as T);
      done();
    },
  });
  return { stream, lines };
};
