/**
 * An upload under way is seen by its uploader: GET /api/files/{name}/upload answers its phase and
 * the bytes received so far (with the share of the declared length), and 404 once it is stored.
 */
import http from 'node:http';
import fc from 'fast-check';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { hostileString, pathSegment } from '../support/hostile';
import { propertyRuns, propertySeed } from '../support/seed';
import { uniqueName } from '../support/world';

const BOUNDARY = 'progress-spec-boundary';
const CSV = `id,label\n${Array.from({ length: 20_000 }, (_, i) => `${i},label ${i % 7}`).join('\n')}\n`;

/** A multipart body with one field `file`, in two halves: the second sent when asked to. */
const halves = () => {
  const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="p.csv"\r\nContent-Type: text/csv\r\n\r\n`;
  const body = Buffer.from(`${head}${CSV}\r\n--${BOUNDARY}--\r\n`);
  const middle = head.length + Math.floor(CSV.length / 2);
  return { length: body.length, first: body.subarray(0, middle), second: body.subarray(middle) };
};

describe.each(storeKinds)('an upload under way on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(() => t?.dispose());

  /** The upload's progress as the uploader asks it, once some of its bytes have been received. */
  const progressOnceSeen = async (name: string) => {
    for (;;) {
      const res = await t.http.get(`/api/files/${name}/upload`);
      if (res.status !== 404 && !(res.body.phase === 'receiving' && res.body.bytes === 0)) return res;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  it('answers the bytes received while receiving, and 404 once stored', async () => {
    const name = uniqueName('progress');
    const { port } = new URL(t.http.get('/').url);
    const body = halves();
    const request = http.request({
      host: '127.0.0.1',
      port: Number(port),
      method: 'PUT',
      path: `/api/files/${name}`,
      headers: {
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        'content-length': body.length,
      },
    });
    const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
      request.on('response', (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      request.on('error', reject);
    });
    request.write(body.first);

    const seen = await progressOnceSeen(name);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ name, phase: 'receiving', declared_bytes: body.length });
    expect(seen.body.bytes).toBeGreaterThan(0);
    expect(seen.body.bytes).toBeLessThan(body.length);
    expect(seen.body.percent).toBeGreaterThanOrEqual(0);
    expect(seen.body.percent).toBeLessThan(100);

    request.end(body.second);
    const done = await answered;
    expect(done.status).toBe(200);
    expect(JSON.parse(done.body)).toMatchObject({ name, row_count: 20_000 });
    const after = await t.http.get(`/api/files/${name}/upload`).expect(404);
    expect(after.body).toMatchObject({ title: 'No upload under way' });
  });

  it('answers 404 for a name no upload is under way of', async () => {
    const res = await t.http.get(`/api/files/${uniqueName('none')}/upload`).expect(404);
    expect(res.body).toMatchObject({ title: 'No upload under way' });
  });

  it('refuses a name no upload could have with a problem naming it, never a 500', async () => {
    const seed = propertySeed();
    await fc.assert(
      fc.asyncProperty(hostileString, fc.boolean(), async (name, raw) => {
        const res = await t.http.get(`/api/files/${pathSegment(name, raw)}/upload`);
        // 431: Node's HTTP parser refuses a request line over its header limit before the app sees it.
        if (res.status === 431) return;
        expect([400, 404]).toContain(res.status);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(res.body).toMatchObject({ status: res.status });
        expect(typeof res.body.title).toBe('string');
        expect(typeof res.body.detail).toBe('string');
        // A name is refused by what it is, before any look-up: nothing long is echoed back.
        expect(res.body.detail.length).toBeLessThan(500);
      }),
      { seed, numRuns: propertyRuns(20) },
    );
  });
});
