/**
 * Issue 35: an 8,000-character X-Request-Id was accepted, logged, echoed and stored in the metadata
 * of every event its request appended. A client's id is kept only when it is 1 to 200 printable
 * ASCII characters; otherwise a new one is used, and the answer's X-Request-Id names it.
 */
import { startTestApp, type TestApp } from '../support/app';

/** Ids this service makes: a UUID's shape (see src/shared/requestIds.ts). */
const GENERATED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('the X-Request-Id a client sends', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
  });
  afterAll(() => t.dispose());

  /** Creates a project with `id` as X-Request-Id; the id answered, and the one its event carries. */
  const createWith = async (name: string, id: string) => {
    const res = await t.http.post('/api/projects').set('X-Request-Id', id).send({ name }).expect(201);
    const answered = res.headers['x-request-id'] as string;
    const { events } = await t.running.ctx.log.readStream(`project-${name}`, 0n);
    expect(events.length).toBeGreaterThan(0);
    return { answered, stored: events.map((e) => e.meta.requestId) };
  };

  it('given 8,000 characters, when a write is made with it, then a generated id is answered and stored', async () => {
    const { answered, stored } = await createWith('p1', 'x'.repeat(8000));
    expect(answered).toMatch(GENERATED);
    expect(stored).toEqual(stored.map(() => answered));
  });

  it('given a control character (a tab: what HTTP carries), when a write is made with it, then a generated id is answered and stored', async () => {
    const { answered, stored } = await createWith('p2', 'trace\tme');
    expect(answered).toMatch(GENERATED);
    expect(stored).toEqual(stored.map(() => answered));
  });

  it('given characters outside ASCII, then a generated id is answered', async () => {
    const res = await t.http.get('/api/util/ping').set('X-Request-Id', 'tr\u00e4ce').expect(200);
    expect(res.headers['x-request-id']).toMatch(GENERATED);
  });

  it('given 200 printable characters, then they are the id, answered and stored', async () => {
    const id = 'a-Z_0 9:/.'.repeat(20);
    expect(id).toHaveLength(200);
    const { answered, stored } = await createWith('p3', id);
    expect(answered).toBe(id);
    expect(stored).toEqual(stored.map(() => id));
    const over = await t.http.get('/api/util/ping').set('X-Request-Id', `${id}b`).expect(200);
    expect(over.headers['x-request-id']).toMatch(GENERATED);
  });
});
