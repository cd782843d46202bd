/**
 * A long JSON array answer is written in slices (src/http/jsonArray.ts) instead of by `res.json`:
 * given any array of at least SLICED_ARRAY_ITEMS items, the text a client receives is exactly the
 * text `res.json` would have sent, and it parses back to the same value.
 */
import express from 'express';
import fc from 'fast-check';
import request from 'supertest';
import { sendJsonArray, SLICED_ARRAY_ITEMS } from '../../src/http/jsonArray';
import { hostileStrings } from '../support/hostile';

const appAnswering = (items: unknown[], how: 'sliced' | 'json') => {
  const app = express();
  app.post('/', (_req, res) => (how === 'sliced' ? sendJsonArray(res, 200, items) : res.json(items)));
  return app;
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

/** Items of every shape an answer holds: hostile and huge strings, numbers, nulls, nested objects and arrays, undefined fields. */
const item = fc.oneof(
  hostileStrings(),
  fc.double(),
  fc.integer(),
  fc.constant(null),
  fc.boolean(),
  fc.dictionary(
    hostileStrings(),
    fc.oneof(hostileStrings(), fc.double(), fc.constant(undefined), fc.constant(null)),
    {
      maxKeys: 6,
    },
  ),
  fc.array(fc.oneof(hostileStrings(), fc.integer(), fc.constant(undefined)), { maxLength: 5 }),
);

describe('a long JSON array answer, written in slices', () => {
  it('given any array of at least SLICED_ARRAY_ITEMS items, then the client reads the text res.json writes, as application/json', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(item, { minLength: SLICED_ARRAY_ITEMS, maxLength: SLICED_ARRAY_ITEMS + 600 }),
        async (items) => {
          const sliced = await rawText(appAnswering(items, 'sliced'));
          const whole = await rawText(appAnswering(items, 'json'));
          expect(sliced.status).toBe(200);
          expect(sliced.type).toBe(whole.type);
          expect(sliced.text).toBe(whole.text);
          expect(sliced.text).toBe(JSON.stringify(items));
        },
      ),
      { seed: 20261127, numRuns: 15 },
    );
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
