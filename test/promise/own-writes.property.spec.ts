import fc from 'fast-check';
import { querySql, startTestApp, storeKinds, type StoreKind, type TestApp } from '../support/app';
import { propertySettings, PROPERTY_TIMEOUT_MS } from '../support/promise-world';
import { expectCaught } from '../support/seed';

/** A fresh seed each run, printed: PROMISE_SEED repeats a failure (PROMISE_RUNS, PROMISE_SCALE run more). */
const SETTINGS = propertySettings(25);

/** Few names, so creates and deletes meet each other (409s and 404s included). */
const NAMES = ['own_a', 'own_b', 'own_c'] as const;

/** `name`: one of NAMES as generated; a run gives it its own suffix. */
type Write = { kind: 'create' | 'delete'; name: string; holdMs: number | null };
type Read = { kind: 'list' | 'getOne' | 'sql' | 'skillIn' | 'skillsSql'; name: string };
type Step = Write | Read;

const writeStep: fc.Arbitrary<Write> = fc.record({
  kind: fc.constantFrom('create' as const, 'delete' as const),
  name: fc.constantFrom(...NAMES),
  // The read model held from just before the write until this many ms after it answers (or not held).
  holdMs: fc.option(fc.integer({ min: 0, max: 60 }), { nil: null, freq: 4 }),
});
/** SQL twice as often: a repeated statement is answered from the cache kept for the read model's version. */
const readStep: fc.Arbitrary<Read> = fc.record({
  kind: fc.constantFrom(
    'list' as const,
    'getOne' as const,
    'sql' as const,
    'sql' as const,
    'skillIn' as const,
    'skillsSql' as const,
    'skillsSql' as const,
  ),
  name: fc.constantFrom(...NAMES),
});
/** Each write is followed at once by a read (that is when the read model is most likely behind it). */
const steps: fc.Arbitrary<Step[]> = fc
  .array(fc.tuple(writeStep, readStep, fc.option(readStep, { nil: null })), { minLength: 2, maxLength: 10 })
  .map((rounds) =>
    rounds.flatMap(([write, read, more]): Step[] => (more ? [write, read, more] : [write, read])),
  );

/**
 * The app a test's runs share. A run's world is its own projects: each run names them afresh
 * (`own_a_<run>`), so it starts where a fresh app would, with none of them and no skills in them,
 * without an app started and disposed per run (on PostgreSQL 1.8 s of each 2.2 s run here). A run
 * that fails leaves the app to no other: the next (fast-check's shrinking) starts a fresh one.
 */
const sharedApp = (kind: StoreKind) => {
  let app: TestApp | null = null;
  let runs = 0;
  return {
    /** The app, and the suffix of this run's names. */
    run: async () => ({ t: (app ??= await startTestApp(kind)), suffix: `_${++runs}` }),
    discard: async () => {
      const gone = app;
      app = null;
      await gone?.dispose();
    },
  };
};
type SharedApp = ReturnType<typeof sharedApp>;

/**
 * The property's check: the plan's writes and reads on the shared app, over this run's own
 * projects, each read against the projects the answered writes leave. `arrange` changes the app
 * first (the kill check's bug), and answers what puts it back.
 */
const readsSeeAnsweredWrites = async (
  apps: SharedApp,
  generated: Step[],
  arrange: (t: TestApp) => () => void = () => () => undefined,
) => {
  const { t, suffix } = await apps.run();
  const plan = generated.map((step): Step => ({ ...step, name: `${step.name}${suffix}` }));
  const runNames = NAMES.map((n) => `${n}${suffix}`);
  const liveNamesOfList = (body: { name: string }[]) =>
    body.map((p) => p.name).filter((n) => runNames.includes(n));
  const restore = arrange(t);
  const live = new Set<string>();
  /** Skills per live project: a project's delete removes its skills (in the same append). */
  const skills = new Map<string, number>();
  const transcript: string[] = [];
  const fail = (what: string) => {
    throw new Error(`${what}\n${transcript.join('\n')}`);
  };
  const releases: Promise<void>[] = [];
  let passed = false;
  try {
    for (const step of plan) {
      transcript.push(JSON.stringify(step));
      switch (step.kind) {
        case 'create':
        case 'delete': {
          const holdMs = step.holdMs;
          const held = holdMs === null ? null : t.running.ctx.projections.hold();
          const res =
            step.kind === 'create'
              ? await t.http.post('/api/projects').send({ name: step.name })
              : await t.http.delete(`/api/projects/${step.name}`);
          const expected =
            step.kind === 'create' ? (live.has(step.name) ? 409 : 201) : live.has(step.name) ? 204 : 404;
          if (res.status !== expected) fail(`${step.kind} ${step.name}: ${res.status}, expected ${expected}`);
          if (res.status === 201) live.add(step.name);
          if (res.status === 204) {
            live.delete(step.name);
            skills.delete(step.name);
          }
          if (held && holdMs !== null)
            releases.push(
              new Promise((resolve) =>
                setTimeout(() => {
                  held.release();
                  resolve();
                }, holdMs),
              ),
            );
          break;
        }
        case 'list': {
          const names = liveNamesOfList((await t.http.get('/api/projects').expect(200)).body);
          if (names.sort().join() !== [...live].sort().join())
            fail(`GET /api/projects listed ${names.join()}, expected ${[...live].join()}`);
          break;
        }
        case 'getOne': {
          const res = await t.http.get(`/api/projects/${step.name}`);
          if (res.status !== (live.has(step.name) ? 200 : 404))
            fail(`GET /api/projects/${step.name}: ${res.status} with live ${[...live].join()}`);
          break;
        }
        case 'sql': {
          const answer = await querySql(
            t,
            `SELECT name FROM information_schema.databases WHERE name IN (${runNames.map((n) => `'${n}'`).join(', ')}) ORDER BY name`,
          );
          const names = (answer.data ?? []).map((r) => String(r[0]));
          if (names.join() !== [...live].sort().join())
            fail(`SQL listed ${names.join()}, expected ${[...live].sort().join()}`);
          break;
        }
        case 'skillIn': {
          // A write that looks its project up in the read model before deciding.
          const res = await t.http
            .post(`/api/projects/${step.name}/skills`)
            .send({ skill: { name: `s_${transcript.length}`, type: 'custom', params: {} } });
          if (res.status !== (live.has(step.name) ? 201 : 404))
            fail(`skill in ${step.name}: ${res.status} with live ${[...live].join()}`);
          if (res.status === 201) skills.set(step.name, (skills.get(step.name) ?? 0) + 1);
          break;
        }
        case 'skillsSql': {
          // A local, deterministic query: its answer is cached for the read model's version.
          const answer = await querySql(
            t,
            `SELECT count(*) FROM information_schema.skills WHERE project = '${step.name}'`,
          );
          const count = Number(answer.data?.[0]?.[0]);
          if (count !== (skills.get(step.name) ?? 0))
            fail(`SQL counted ${count} skills in ${step.name}, expected ${skills.get(step.name) ?? 0}`);
          break;
        }
        default: {
          const unknown: never = step;
          return unknown;
        }
      }
    }
    passed = true;
  } finally {
    restore();
    await Promise.all(releases);
    // A failed run leaves the app to no other.
    if (!passed) await apps.discard();
  }
};

/** The kill check's bug: the gate reads pass never waits for the writes answered ahead of the read model. */
const gateAlwaysOpen = (t: TestApp) => {
  const open = jest.spyOn(t.running.ctx.projections, 'ownWritesApplied').mockReturnValue(undefined);
  return () => open.mockRestore();
};

/**
 * Project creates and deletes answer as soon as the log has their events (their answers are made from
 * the command's own state); this process's reads wait for them instead. Whatever the read model is
 * doing (held for a while after the write, or free), every read after a write's answer, of any kind
 * (a list, one project, a SQL statement, a write that looks the project up), sees exactly the
 * projects the answered writes leave. Beside it, a kill check: reads that pass the gate without
 * waiting for this process's writes answered ahead are caught at the count `npm test` runs.
 */
describe.each(storeKinds)('reads after writes answered ahead of the read model (%s)', (kind) => {
  it(
    'given generated creates, deletes and reads with the runner held at random, then every read sees every answered write',
    async () => {
      const apps = sharedApp(kind);
      try {
        await fc.assert(
          fc.asyncProperty(steps, (plan) => readsSeeAnsweredWrites(apps, plan)),
          SETTINGS,
        );
      } finally {
        await apps.discard();
      }
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'kill check: reads that do not wait for the writes answered ahead of the read model are caught',
    async () => {
      const apps = sharedApp(kind);
      try {
        await expectCaught(
          fc.asyncProperty(steps, (plan) => readsSeeAnsweredWrites(apps, plan, gateAlwaysOpen)),
          SETTINGS,
        );
      } finally {
        await apps.discard();
      }
    },
    PROPERTY_TIMEOUT_MS,
  );
});
