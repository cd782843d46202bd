/**
 * What LLM_FILTER, LLM_REDUCE and LLM_RERANK are given, generated: hostile prompts and column values
 * (NUL, lone surrogates, huge, empty) are answered with a table or a SQL error naming the argument,
 * never a 500 or an internal error; and LLM_REDUCE's answer does not depend on the order its group's
 * rows were read in (the same values loaded in two orders are asked the same prompt). Beside it,
 * the kill check: an order-dependent reduce (`LLM(string_agg(…))`) is caught by the same property.
 */
import fc from 'fast-check';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { clip, hostileStrings, lit } from '../support/hostile';
import { propertyRuns, propertySeed } from '../support/seed';
import { givenTexts } from '../llmModels/world';
import { ruled } from './llm-aggregates-support';
import { textCallsLlm } from '../../src/agentRuns/asOfSql';

const SEED = propertySeed();

describe('generated inputs of the LLM functions', () => {
  let t: TestApp;
  let fake: FakeOpenAi;
  let file: string;
  const sql = (query: string) => querySql(t, query);

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    ruled(fake);
    t = await startTestApp('sqlite', {
      LLM_FUNCTION_BASE_URL: fake.baseUrl,
      LLM_FUNCTION_MODEL_NAME: 'fn-model',
    });
    file = await givenTexts(t, ['one keep', 'two', 'three keep']);
  });
  afterAll(async () => {
    await t.dispose();
    await fake.close();
  });

  it.each([
    ['a NUL', `'a' || chr(0) || 'b'`, 'holds a NUL character'],
    ['a huge text', `repeat('x', 9000)`, 'is 9000 characters long, past 8000'],
    // The statement's reader replaces a lone surrogate by U+FFFD before the prompt is seen.
    ['a lone surrogate', `'ok \ud800 ?'`, 'holds U\\+FFFD \\(a lone surrogate'],
  ])('refuses a prompt holding %s, naming the argument', async (_, prompt, why) => {
    for (const query of [
      `SELECT id FROM files.${file} WHERE LLM_FILTER(${prompt}, text)`,
      `SELECT LLM_REDUCE(${prompt}, text) AS s FROM files.${file}`,
      `SELECT id FROM files.${file} ORDER BY LLM_RERANK(${prompt}, text)`,
    ]) {
      const answer = await sql(query);
      expect(answer).toMatchObject({ type: 'error', error_code: 1210 });
      expect(answer.error_message).toMatch(new RegExp(`^LLM_[A-Z]+: its argument 1 \\(the prompt\\) ${why}`));
    }
  });

  it('refuses a column value holding a NUL, naming the argument and its column', async () => {
    const answer = await sql(`SELECT id FROM files.${file} WHERE LLM_FILTER('ok?', text || chr(0))`);
    expect(answer).toMatchObject({ type: 'error', error_code: 1210 });
    expect(answer.error_message).toBe('LLM_FILTER: its argument 2 ("value1") holds a NUL character');
  });

  it('answers every generated prompt and value with a table or a SQL error, never an internal one', async () => {
    const violations: string[] = [];
    let tables = 0;
    await fc.assert(
      fc.asyncProperty(
        hostileStrings(['keep', '{{', 'Rows:\n']),
        fc.constantFrom('LLM_FILTER', 'LLM_REDUCE', 'LLM_RERANK'),
        fc.boolean(),
        async (s, fn, asPrompt) => {
          const [prompt, value] = asPrompt ? [lit(s), 'text'] : [`'Keep?'`, `text || ${lit(s)}`];
          const query =
            fn === 'LLM_FILTER'
              ? `SELECT id FROM files.${file} WHERE LLM_FILTER(${prompt}, ${value})`
              : fn === 'LLM_REDUCE'
                ? `SELECT LLM_REDUCE(${prompt}, ${value}) AS s FROM files.${file}`
                : `SELECT id FROM files.${file} ORDER BY LLM_RERANK(${prompt}, ${value})`;
          const res = await t.http.post('/api/sql/query').send({ query });
          if (res.status !== 200 || res.body?.error_code === 1105)
            violations.push(`${clip(query)} → ${res.status} ${clip(res.text)}`);
          if (res.body?.type === 'table') tables++;
        },
      ),
      { seed: SEED, numRuns: propertyRuns(30) },
    );
    expect(violations).toEqual([]);
    expect(tables).toBeGreaterThan(0);
  });

  /** The property: the same values, loaded in two orders, are answered the same by `reduce`. */
  const orderFree = (reduce: (file: string) => string) =>
    fc.asyncProperty(
      fc
        .uniqueArray(fc.stringMatching(/^[a-z]{1,8}$/), { minLength: 2, maxLength: 8 })
        .chain((values) =>
          fc.tuple(fc.constant(values), fc.shuffledSubarray(values, { minLength: values.length })),
        ),
      async ([values, shuffled]) => {
        fc.pre(values.join() !== shuffled.join());
        const [a, b] = [await givenTexts(t, values), await givenTexts(t, shuffled)];
        const answers = [await sql(reduce(a)), await sql(reduce(b))].map((x) => x.data);
        expect(answers[1]).toEqual(answers[0]);
      },
    );

  it('LLM_REDUCE answers the same whatever order its rows were read in', async () => {
    await fc.assert(
      orderFree((f) => `SELECT LLM_REDUCE('Summarize', text) AS s FROM files.${f}`),
      { seed: SEED, numRuns: propertyRuns(6) },
    );
  });

  it("a replay of an agent's SQL makes none of their calls (it knows them by name, in any case)", () => {
    for (const sql of [
      `SELECT id FROM t WHERE llm_filter('x', c)`,
      `SELECT LLM_REDUCE ('x', c) FROM t`,
      `SELECT id FROM t ORDER BY Llm_Rerank('x', c)`,
    ])
      expect({ sql, calls: textCallsLlm(sql) }).toEqual({ sql, calls: true });
    expect(textCallsLlm(`SELECT llm_filter FROM t`)).toBe(false);
  });

  describe('kill check', () => {
    it('the property catches a reduce that asks its rows in the order they were read', async () => {
      const outcome = await fc.check(
        orderFree((f) => `SELECT LLM('Summarize ' || string_agg(text, '|')) AS s FROM files.${f}`),
        { seed: SEED, numRuns: propertyRuns(6) },
      );
      expect(outcome.failed).toBe(true);
    });
  });
});
