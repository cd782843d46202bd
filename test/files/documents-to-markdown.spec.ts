/**
 * `TO_MARKDOWN(<document>)` in SQL, as MindsDB writes it: an uploaded file (files.<name>, or its
 * name as text) or an http(s) URL, answered as the document's markdown (no LLM: its own text).
 * URLs go through the outbound policy: a local listener is refused unless OUTBOUND_ALLOW lists it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { hostileString, lit } from '../support/hostile';
import { propertyRuns, propertySeed } from '../support/seed';
import { uniqueName } from '../support/world';
import { docxOf, pdfOf } from './documents-fixtures';

const SEED = propertySeed();

/** A local listener serving documents, counting the requests it answered. */
const documentServer = async () => {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    if (req.url === '/guide.pdf') res.end(pdfOf(['Kingfishers dive for fish', 'They nest in river banks']));
    else if (req.url === '/page')
      res.setHeader('content-type', 'text/html').end('<!doctype html><h1>Voles</h1><p>Water voles swim.</p>');
    else if (req.url === '/data.csv') res.end('a,b\n1,2\n');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};

describe.each(storeKinds)('TO_MARKDOWN() on %s', (store) => {
  let t: TestApp;
  let docs: Awaited<ReturnType<typeof documentServer>>;
  beforeAll(async () => {
    docs = await documentServer();
    t = await startTestApp(store, { OUTBOUND_LOCAL_FIRST: 'false', OUTBOUND_ALLOW: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.dispose();
    await docs.close();
  });

  it('given an uploaded DOCX, when TO_MARKDOWN reads it by files.<name> or by its name, then it answers its sections as one markdown text', async () => {
    const name = uniqueName('memo');
    await t.http
      .put(`/api/files/${name}`)
      .attach('file', docxOf(['# Ospreys', 'Ospreys eat fish.', '# Kites', 'Kites soar.']), 'memo.docx')
      .expect(200);

    const byRef = await querySql(t, `SELECT TO_MARKDOWN(files.${name}) AS md`);
    const byName = await querySql(t, `SELECT to_markdown('${name}')`);

    expect(byRef).toMatchObject({
      type: 'table',
      column_names: ['md'],
      data: [['# Ospreys\n\nOspreys eat fish.\n\n# Kites\n\nKites soar.']],
    });
    expect(byName).toMatchObject({
      type: 'table',
      column_names: [`to_markdown('${name}')`],
      data: byRef.data,
    });
  });

  it('given a PDF and an HTML at URLs, when TO_MARKDOWN fetches them, then each answers its text, and nothing is recorded', async () => {
    const answer = await querySql(
      t,
      `SELECT TO_MARKDOWN('${docs.base}/guide.pdf') AS pdf, TO_MARKDOWN('${docs.base}/page') AS html`,
    );
    expect(answer).toMatchObject({
      type: 'table',
      data: [['Kingfishers dive for fish\n\nThey nest in river banks', '# Voles\n\nWater voles swim.']],
    });
    // A read: the log holds no file for it.
    const listed = (await t.http.get('/api/files').expect(200)).body as { original_name: string | null }[];
    expect(listed.filter((f) => f.original_name === 'guide.pdf')).toEqual([]);
  });

  it('given a table file, a missing file, a URL that is not a document, or a non-constant argument, then a SQL error names the call', async () => {
    const table = uniqueName('tab');
    await t.http.put(`/api/files/${table}`).attach('file', Buffer.from('a,b\n1,2\n'), 'tab.csv').expect(200);
    const cases: [string, RegExp][] = [
      [`SELECT TO_MARKDOWN(files.${table})`, /is a csv table, not a document/],
      [`SELECT TO_MARKDOWN(files.nothing_here_at_all)`, /there is no file files\.nothing_here_at_all/],
      [`SELECT TO_MARKDOWN('${docs.base}/data.csv')`, /not a document TO_MARKDOWN\(\) converts/],
      [`SELECT TO_MARKDOWN('${docs.base}/missing.pdf')`, /HTTP 404/],
      [`SELECT TO_MARKDOWN(a) FROM files.${table}`, /TO_MARKDOWN\(\) takes one document/],
      [`SELECT TO_MARKDOWN('a', 'b')`, /TO_MARKDOWN\(\) takes one document/],
    ];
    for (const [query, message] of cases)
      expect(await querySql(t, query)).toMatchObject({
        type: 'error',
        error_message: expect.stringMatching(message),
      });
  });

  it('given generated hostile arguments, then TO_MARKDOWN answers a table or a SQL error, never a 500, and records nothing', async () => {
    const logged = async () => (await t.http.get('/api/events?limit=10000').expect(200)).body.events.length;
    const before = await logged();
    await fc.assert(
      fc.asyncProperty(hostileString, async (argument) => {
        const res = await t.http
          .post('/api/sql/query')
          .send({ query: `SELECT TO_MARKDOWN(${lit(argument)}) AS md` });
        expect(res.status).toBe(200);
        expect(['table', 'error']).toContain(res.body.type);
      }),
      { seed: SEED, numRuns: propertyRuns(30) },
    );
    expect(await logged()).toBe(before);
  });
});

describe('TO_MARKDOWN() and the outbound policy', () => {
  let t: TestApp;
  let docs: Awaited<ReturnType<typeof documentServer>>;
  beforeAll(async () => {
    docs = await documentServer();
    // Another private address is admitted, not this one (the test apps admit loopback by default).
    t = await startTestApp('sqlite', { OUTBOUND_LOCAL_FIRST: 'false', OUTBOUND_ALLOW: '10.11.12.13' });
  });
  afterAll(async () => {
    await t?.dispose();
    await docs.close();
  });

  it('given a URL on a private address OUTBOUND_ALLOW does not list, then it is refused before any request is made', async () => {
    const answer = await querySql(t, `SELECT TO_MARKDOWN('${docs.base}/guide.pdf')`);
    expect(answer).toMatchObject({
      type: 'error',
      error_message: expect.stringMatching(/refused.*OUTBOUND_ALLOW/s),
    });
    expect(docs.requests()).toBe(0);
  });
});
