/**
 * Every new input of LLM models, generated hostile (full Unicode with lone surrogates and NUL, huge,
 * deeply nested, empty): CREATE MODEL's options and name, a query's WHERE values and USING
 * overrides, LLM()'s prompt. Each is answered (a table or a SQL error), never a 500 or an internal
 * error; afterwards the service writes, is ready at the log's head, and a rebuild equals live.
 * Beside it, a kill check: a log that wraps its append failures in a plain Error (the contract's
 * refusal of a NUL or a lone surrogate loses its kind: an internal error) is caught at the count
 * `npm test` runs.
 */
import fc from 'fast-check';
import { storeKinds, type TestApp } from '../support/app';
import type { FakeOpenAi } from '../support/fakeOpenAi';
import { clip } from '../support/hostile';
import { rebuildDifferences } from '../support/promise-rebuild';
import { hostileLlmStatements, startHostileLlmWorld } from './world';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';
import { appendFailuresAsPlainErrors } from '../support/killChecks';

const SEED = propertySeed();
const RUNS = Number(process.env.HOSTILE_RUNS ?? 40);

describe.each(storeKinds)('generated values in LLM models and LLM() (%s)', (kind) => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let engine: string;
  let model: string;
  beforeAll(async () => {
    ({ t, fake, engine, model } = await startHostileLlmWorld(kind));
  }, 60_000);
  afterAll(async () => {
    await t.dispose();
    await fake.close();
  });

  /** One statement sent, then the model it may have made dropped: the promise it broke, if any, and whether it read a table. */
  const sendStatement = async (query: string) => {
    const res = await t.http.post('/api/sql/query').send({ query });
    const violation =
      res.status !== 200 || res.body?.error_code === 1105
        ? `SQL ${clip(query)} → ${res.status} ${clip(res.text)}`
        : undefined;
    await t.http.post('/api/sql/query').send({ query: 'DROP MODEL IF EXISTS mindsdb.hm' });
    return { violation, table: res.body?.type === 'table' };
  };

  it('answers every one (a table or a SQL error), and the service goes on', async () => {
    const violations = new Set<string>();
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(hostileLlmStatements(model, engine), async (query) => {
        const { violation, table } = await sendStatement(query);
        if (violation !== undefined) violations.add(violation);
        if (table) answered++;
      }),
      { seed: SEED, numRuns: propertyRuns(RUNS) },
    );
    expect([...violations]).toEqual([]);
    expect(answered).toBeGreaterThan(0);

    const after = await t.http
      .post('/api/sql/query')
      .send({ query: `SELECT answer FROM mindsdb.${model} WHERE q = 'after'` })
      .expect(200);
    expect(after.body.data).toEqual([['answer: Q: after']]);
    const ready = (await t.http.get('/api/ready').expect(200)).body as { position: string; log_head: string };
    expect(ready.position).toBe(ready.log_head);
    const status = (await t.http.get('/api/status').expect(200)).body as { read_model: { failed: unknown } };
    expect(status.read_model.failed).toBeNull();
    expect(await rebuildDifferences(t, 7)).toEqual([]);
  }, 600_000);

  it("kill check: a log that wraps its append failures in a plain Error (a refusal's kind lost) is caught", async () => {
    // The bug: the log's append rethrows what failed as `new Error(…)`, so the contract's refusal
    // of a model option holding a NUL or a lone surrogate reaches the command runner as no refusal
    // it knows, and the statement is answered as the server's own failure (1105).
    const restore = appendFailuresAsPlainErrors(t);
    try {
      await expectCaught(
        fc.asyncProperty(
          hostileLlmStatements(model, engine),
          async (query) => (await sendStatement(query)).violation === undefined,
        ),
        { seed: SEED, numRuns: propertyRuns(RUNS) },
      );
    } finally {
      restore();
    }
  }, 600_000);
});
