/**
 * A long JSON array answer, or an object holding one (the SQL endpoint's `data`), is written in
 * slices (src/http/slicedJson.ts) instead of by `res.json`: the text a client receives is exactly
 * the text `res.json` would have sent.
 * Beside it, a kill check: a writer that joins the slices without the comma between them is caught at
 * the count `npm test` runs.
 */
import express from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { holdsLongArray, sendSlicedJson, SLICED_ARRAY_ITEMS, sliceTexts } from '../../src/http/slicedJson';
import { hostileStrings } from '../support/hostile';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

type SendSliced = typeof sendSlicedJson;

const appAnswering = (items: unknown, how: 'sliced' | 'json', sendSliced: SendSliced = sendSlicedJson) => {
  const app = express();
  app.post('/', (_req, res) => (how === 'sliced' ? sendSliced(res, 200, items) : res.json(items)));
  return app;
};

/** An array written slice by slice with nothing between the slices (the kill check's bug). */
const slicesJoinedWithoutCommas: SendSliced = (res, status, items) => {
  res.status(status);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.write('[');
  for (const text of sliceTexts(items as unknown[])) res.write(text.slice(1, -1));
  res.write(']');
  res.end();
};

const rawText = async (app: express.Express) => {
  const res = await request(app)
    .post('/')
    .buffer(true)
    .parse((r, done) => {
      let text = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => (text += c));
      r.on('end', () => done(null, text));
    });
  return { status: res.status, type: res.headers['content-type'], text: res.body as string };
};

/**
 * Strings of an answer: hostile ones up to 9,000 characters (several to a slice), and now and then one
 * longer than a slice. Every huge string at hostileStrings' own rate made each run's body ~4 MB and
 * the file ~35 s of work, over jest's bound on a loaded machine; the sizes a slice meets are kept.
 */
const text = fc.oneof(
  { weight: 150, arbitrary: hostileStrings([], 9_000) },
  { weight: 1, arbitrary: fc.constant('\u00e9'.repeat(70_000)) },
);

/** Items of every shape an answer holds: hostile and huge strings, numbers, nulls, nested objects and arrays, undefined fields. */
const item = fc.oneof(
  text,
  fc.double(),
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
  fc.dictionary(text, fc.oneof(text, fc.double(), fc.constant(undefined), fc.constant(null)), {
    maxKeys: 6,
  }),
  fc.array(fc.oneof(text, fc.integer(), fc.constant(undefined)), { maxLength: 5 }),
);

const longArray = fc.array(item, { minLength: SLICED_ARRAY_ITEMS, maxLength: SLICED_ARRAY_ITEMS + 600 });

/** The client reads, from an array written by `sendSliced`, the text res.json writes. */
const readsAsResJson = async (items: unknown[], sendSliced: SendSliced) => {
  const sliced = await rawText(appAnswering(items, 'sliced', sendSliced));
  const whole = await rawText(appAnswering(items, 'json'));
  expect(sliced.status).toBe(200);
  expect(sliced.type).toBe(whole.type);
  expect(sliced.text).toBe(whole.text);
  expect(sliced.text).toBe(JSON.stringify(items));
};

describe('a long JSON array answer, written in slices', () => {
  it('given any array of at least SLICED_ARRAY_ITEMS items, then the client reads the text res.json writes, as application/json', async () => {
    await fc.assert(
      fc.asyncProperty(longArray, (items) => readsAsResJson(items, sendSlicedJson)),
      { seed: propertySeed(), numRuns: propertyRuns(15) },
    );
  });

  it('kill check: slices joined without the comma between them are caught', async () => {
    await expectCaught(
      fc.asyncProperty(longArray, (items) => readsAsResJson(items, slicesJoinedWithoutCommas)),
      { seed: propertySeed(), numRuns: propertyRuns(15) },
    );
  });

  it('given an object holding a long array among other fields (undefined ones too, any key), then the client reads the text res.json writes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(hostileStrings(), fc.oneof(item, fc.constant(undefined))), { maxLength: 4 }),
        hostileStrings(),
        fc.array(fc.array(item, { maxLength: 4 }), {
          minLength: SLICED_ARRAY_ITEMS,
          maxLength: SLICED_ARRAY_ITEMS + 300,
        }),
        fc.array(fc.tuple(hostileStrings(), fc.oneof(item, fc.constant(undefined))), { maxLength: 4 }),
        async (before, rowsKey, rows, after) => {
          // Own fields only, built as JSON.parse builds them: assigning body['__proto__'] (a key
          // fast-check draws) would set the prototype instead, and no answer holds such an object.
          const body: Record<string, unknown> = Object.fromEntries([
            ...before,
            [rowsKey, rows],
            ...after.filter(([k]) => k !== rowsKey),
          ]);
          expect(holdsLongArray(body)).toBe(true);
          const sliced = await rawText(appAnswering(body, 'sliced'));
          const whole = await rawText(appAnswering(body, 'json'));
          expect(sliced.text).toBe(whole.text);
          expect(sliced.text).toBe(JSON.stringify(body));
        },
      ),
      { seed: propertySeed(), numRuns: propertyRuns(15) },
    );
  });

  it('given short arrays, objects without a long array, or values that are not plain objects, then res.json answers as before', () => {
    expect(holdsLongArray(Array.from({ length: SLICED_ARRAY_ITEMS - 1 }, () => 1))).toBe(false);
    expect(holdsLongArray({ data: [[1]], type: 'table' })).toBe(false);
    expect(holdsLongArray({ nested: { data: Array.from({ length: SLICED_ARRAY_ITEMS }, () => 1) } })).toBe(
      false,
    );
    expect(
      holdsLongArray({ data: Array.from({ length: SLICED_ARRAY_ITEMS }, () => 1), toJSON: () => 1 }),
    ).toBe(false);
    expect(holdsLongArray(new Map())).toBe(false);
    expect(holdsLongArray('x'.repeat(SLICED_ARRAY_ITEMS))).toBe(false);
  });

  it('given items longer than a slice among short ones, then each goes alone and the text is still whole', async () => {
    const items = Array.from({ length: SLICED_ARRAY_ITEMS }, (_, i) => ({
      i,
      text: i % 250 === 0 ? 'é'.repeat(70_000 + i) : 'x',
    }));
    const sliced = await rawText(appAnswering(items, 'sliced'));
    expect(sliced.text.length).toBe(JSON.stringify(items).length);
    expect(JSON.parse(sliced.text)).toEqual(items);
  });
});
