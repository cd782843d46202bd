/**
 * An upload whose bytes cannot be written to disk (the incoming directory gone, a full disk) is a
 * failed request, never a failure of the process: the next upload is stored.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { uniqueName } from '../support/world';

// Large enough to be written in many chunks: the write fails while the body still arrives.
const CSV = Buffer.from(`id,label\n${Array.from({ length: 200_000 }, (_, i) => `${i},l${i}`).join('\n')}\n`);

describe.each(storeKinds)('an upload that cannot be written on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  it('answers an error, and the next upload is stored', async () => {
    const incoming = path.join(t.config.dataDir, 'files', 'incoming');
    fs.rmSync(incoming, { recursive: true, force: true });
    // Outside jest an unhandled rejection ends the process (it did: the server exited at a failed write).
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const failed = await t.http.put(`/api/files/${uniqueName('lost')}`).attach('file', CSV, 'lost.csv');
      expect(failed.status).toBe(500);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', note);
    }
    expect(unhandled).toEqual([]);

    fs.mkdirSync(incoming, { recursive: true });
    const name = uniqueName('kept');
    const stored = await t.http.put(`/api/files/${name}`).attach('file', CSV, 'kept.csv').expect(200);
    expect(stored.body).toMatchObject({ name, row_count: 200_000 });
  });
});
