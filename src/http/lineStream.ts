import type { Response } from 'express';
import { firstEvent } from '../shared/firstEvent';

/** The streamed answers a client may ask for (MindsDB's `response_format` of `POST /api/sql/query`). */
export const LINE_FORMATS = ['sse', 'jsonlines'] as const;
export type LineFormat = (typeof LINE_FORMATS)[number];

/** MindsDB's content types: `application/jsonlines` exactly (its spec compares the whole header). */
const CONTENT_TYPES: Record<LineFormat, string> = {
  jsonlines: 'application/jsonlines',
  sse: 'text/event-stream; charset=utf-8',
};

/**
 * A streamed answer of JSON texts, one a line (`jsonlines`: `<json>\n`) or one an event (`sse`:
 * `data: <json>\n\n`), written as the socket takes them: `write` waits for 'drain' once the socket's
 * buffer is full, so a producer that awaits it never holds more than one piece ahead of the client.
 * `gone` once the client went away (the response closed before its end): writes are dropped then and
 * the producer should stop.
 */
export class LineWriter {
  private started = false;
  private closed = false;

  constructor(
    private readonly res: Response,
    private readonly format: LineFormat,
  ) {
    res.once('close', () => {
      this.closed = true;
    });
  }

  /** The client went away (or the answer ended). */
  get gone(): boolean {
    return this.closed || this.res.destroyed || this.res.writableEnded;
  }

  private start() {
    if (this.started) return;
    this.started = true;
    const res = this.res;
    res.status(200);
    res.setHeader('Content-Type', CONTENT_TYPES[this.format]);
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    // No proxy buffering of what is meant to arrive as it is made (nginx).
    res.setHeader('X-Accel-Buffering', 'no');
  }

  /** Writes one JSON text (already serialized) as a line or event; resolves once the socket can take more. */
  async write(json: string): Promise<void> {
    this.start();
    if (this.gone) return;
    const framed = this.format === 'sse' ? `data: ${json}\n\n` : `${json}\n`;
    if (this.res.write(framed)) return;
    await this.drained();
  }

  /** Settles on 'drain', or once the response closes (a client gone never drains). */
  private drained() {
    return this.gone ? Promise.resolve() : firstEvent(this.res, ['drain', 'close']);
  }

  /** Ends the answer (headers are sent now if nothing was written). */
  end() {
    this.start();
    if (!this.res.writableEnded) this.res.end();
  }
}
