/**
 * The promises a JOIN with an LLM model keeps, over generated tables (texts drawn from a few, so
 * they repeat): each distinct prompt is asked once; never more calls than LLM_SQL_MAX_CALLS (past
 * it, none at all); every row gets its own prompt's answer; asked again, the answers come from the
 * cache, equal to the first ones, with no call, and are recorded as cached.
 * Beside it, a kill check: a JOIN that asks the model row by row (each row its own request, all at
 * once) is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { fakeReply, lastUserText, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { givenLlmModel, givenTexts, rowsOf, type LlmWorld } from './world';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';
import { methodReplaced, whileBugged } from '../support/killChecks';

const SEED = propertySeed();
const CAP = 6;

describe('a JOIN with an LLM model', () => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let w: LlmWorld;
  let run = 0;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    // Answers arrive out of order (a random delay each), as a provider's do under concurrency.
    fake.setFallback((body) =>
      fakeReply.text(`«${lastUserText(body)}»`, { delayMs: Math.floor(Math.random() * 15) }),
    );
    t = await startTestApp('sqlite', {
      LLM_SQL_MAX_CALLS: String(CAP),
      LLM_SQL_CONCURRENCY: '3',
      LLM_CACHE_ENTRIES: '10000',
    });
    w = await givenLlmModel(t, { fake, using: "prompt_template = 'S: {{text}}'" });
  });
  afterAll(async () => {
    await t.dispose();
    await fake.close();
  });

  /** A file's texts, drawn from a few so that they repeat. */
  const textsOfFile = fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', ' ', 'ü', '😀'), {
    minLength: 1,
    maxLength: 12,
  });

  /** One JOIN over a file of these texts, asked twice: the calls made, the answers, and what was recorded. */
  const asksEachDistinctPromptOnce = async (texts: string[]) => {
    // A prefix of the run's own: earlier runs' answers are not in the cache for it.
    const prefix = `r${++run}-`;
    const rows = texts.map((x) => prefix + x);
    const file = await givenTexts(t, rows);
    const query = `SELECT t.text, m.answer FROM files.${file} AS t JOIN ${w.project}.${w.model} AS m ORDER BY t.id`;
    const distinct = new Set(rows).size;
    const before = fake.chatRequests().length;
    const first = await querySql(t, query);
    const made = fake.chatRequests().length - before;
    if (distinct > CAP) {
      expect(first).toMatchObject({ type: 'error', error_code: 1153 });
      expect(made).toBe(0);
      return;
    }
    expect(made).toBe(distinct);
    // (Compared by text: a one-row file's id column reads as a boolean.)
    const expected = rows.map((x) => ({ text: x, answer: `«S: ${x}»` }));
    expect(rowsOf(first)).toEqual(expected);

    const again = await querySql(t, query);
    expect(fake.chatRequests().length - before).toBe(distinct);
    expect(rowsOf(again)).toEqual(expected);
    const recorded = rowsOf(
      await querySql(
        t,
        `SELECT QUERY_ID, count(*) AS n, count(*) FILTER (WHERE CACHED) AS cached, sum(TOTAL_TOKENS) AS tokens
         FROM information_schema.LLM_CALLS WHERE PROJECT = '${w.project}' GROUP BY QUERY_ID
         ORDER BY min(CALLED_AT) DESC, QUERY_ID LIMIT 2`,
      ),
    );
    // The two queries: one recorded its calls, the other its cached answers (no tokens).
    expect(recorded.map((r) => [r.n, r.cached]).sort()).toEqual(
      [
        [distinct, 0],
        [distinct, distinct],
      ].sort(),
    );
  };

  it('asks each distinct prompt once, within the cap, and a cached answer equals the answer called for', async () => {
    await fc.assert(fc.asyncProperty(textsOfFile, asksEachDistinctPromptOnce), {
      seed: SEED,
      numRuns: propertyRuns(25),
    });
  }, 300_000);

  it('kill check: a JOIN that asks the model row by row is caught', async () => {
    // The bug: the model's rows are answered each on its own (one request per row, all at once):
    // a repeated prompt is asked again, and the cap is counted per row.
    await whileBugged(
      () =>
        methodReplaced(
          t.running.services.llmCalls,
          'answerModel',
          (answerModel) => async (model, rows, options) =>
            (await Promise.all(rows.map((row) => answerModel(model, [row], options)))).flat(),
        ),
      () =>
        expectCaught(fc.asyncProperty(textsOfFile, asksEachDistinctPromptOnce), {
          seed: SEED,
          numRuns: propertyRuns(25),
        }),
    );
  }, 300_000);
});
