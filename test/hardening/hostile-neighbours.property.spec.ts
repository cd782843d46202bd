/**
 * One client's bad command never fails its neighbours' good ones. Group commit appends the commands
 * waiting for a stream together; a probe sending a skill type PostgreSQL's jsonb refuses next to
 * twelve legitimate writers made 225 of 240 legitimate creates fail with 500. Generated hostile
 * commands (bad strings, oversized values, deep values) from several clients, mixed with legitimate
 * ones from several others, all into one project on PostgreSQL: every legitimate one succeeds and is
 * read back, every hostile one is refused with a 4xx.
 * Beside it, a kill check: a log that reports every failed append as a version conflict (so a group
 * holding one unstorable command is decided again and again, never split) is caught at the count
 * `npm test` runs.
 */
import fc from 'fast-check';
import { StreamVersionConflict } from '../../src/eventlog/types';
import { startTestApp, type TestApp } from '../support/app';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const nested = (levels: number): unknown => {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

/** A skill create no store can hold, in one of the shapes the probe and its predecessors found. */
const hostileSkill = fc.oneof(
  fc
    .constantFrom('\u0000', '\ud800', '\udfff', 'a\u0000b', 'x\udc00y')
    .map((bad) => ({ type: bad, params: {} })),
  fc.constantFrom('\u0000', '\ud800').map((bad) => ({ type: 'text', params: { [`k${bad}`]: 1 } })),
  fc.constant({ type: 'text', params: { text: 'x'.repeat(1024 * 1024 + 10) } }),
  fc.integer({ min: 70, max: 3000 }).map((levels) => ({ type: 'text', params: { p: nested(levels) } })),
);

type Sent = { legitimate: boolean; name: string; body: unknown };

describe('hostile commands beside legitimate ones in one project (postgres)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('postgres');
    await t.http.post('/api/projects').send({ name: 'shared' }).expect(201);
  });
  afterAll(async () => t.dispose());

  /** Attackers' commands, how many legitimate clients, and how many creates each sends. */
  const crowd = fc.tuple(
    fc.array(fc.array(hostileSkill, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 4 }),
    fc.integer({ min: 4, max: 10 }),
    fc.integer({ min: 2, max: 4 }),
  );

  /** Names made by every round of this file's checks (the property's and the kill check's alike). */
  let round = 0;

  /** One round: every client sends its commands at once; each answer and the listing are held to the promise. */
  const neighboursUnharmed = async ([attackers, clients, perClient]: [
    { type: string; params: Record<string, unknown> }[][],
    number,
    number,
  ]) => {
    round++;
    const sent: Sent[][] = [
      ...attackers.map((commands, a) =>
        commands.map((skill, i) => ({
          legitimate: false,
          name: `bad_${round}_${a}_${i}`,
          body: skill,
        })),
      ),
      ...Array.from({ length: clients }, (_, c) =>
        Array.from({ length: perClient }, (_, i) => ({
          legitimate: true,
          name: `good_${round}_${c}_${i}`,
          body: { type: 'text', params: { n: i, note: 'ordinary \ud83d\ude00' } },
        })),
      ),
    ];
    // Each client sends its commands one after another; all clients at once.
    const answers = await Promise.all(
      sent.map(async (commands) => {
        const out: { sent: Sent; status: number; text: string }[] = [];
        for (const s of commands) {
          const res = await t.http
            .post('/api/projects/shared/skills')
            .send({ skill: { name: s.name, ...(s.body as object) } });
          out.push({ sent: s, status: res.status, text: res.text.slice(0, 160) });
        }
        return out;
      }),
    );
    const flat = answers.flat();
    const wrong = flat.filter((a) =>
      a.sent.legitimate ? a.status !== 201 : a.status < 400 || a.status >= 500,
    );
    expect(wrong.map((a) => `${a.sent.name} → ${a.status} ${a.text}`)).toEqual([]);
    const listed = new Set(
      ((await t.http.get('/api/projects/shared/skills').expect(200)).body as { name: string }[]).map(
        (s) => s.name,
      ),
    );
    for (const a of flat) expect(listed.has(a.sent.name)).toBe(a.sent.legitimate);
  };

  it('given several hostile and several legitimate clients at once, then every legitimate write succeeds and is read back, every hostile one is a 4xx', async () => {
    await fc.assert(fc.asyncProperty(crowd, neighboursUnharmed), {
      seed: propertySeed(),
      numRuns: propertyRuns(6),
    });
    await t.http.get('/api/ready').expect(200);
  }, 300_000);

  it('kill check: a log that reports every failed append as a version conflict is caught', async () => {
    // The bug: the store's append takes any failure for a lost race. The command runner then decides
    // the group again (the unstorable command still in it) rather than running each command alone,
    // and after its last attempt every command of the group fails, the legitimate ones too.
    const log = t.running.ctx.log;
    const append = log.append.bind(log);
    const spy = jest.spyOn(log, 'append').mockImplementation(async (stream, events, expected, causes) => {
      try {
        return await append(stream, events, expected, causes);
      } catch {
        throw new StreamVersionConflict(stream, expected);
      }
    });
    try {
      await expectCaught(fc.asyncProperty(crowd, neighboursUnharmed), {
        seed: propertySeed(),
        numRuns: propertyRuns(6),
      });
    } finally {
      spy.mockRestore();
    }
  }, 300_000);
});
