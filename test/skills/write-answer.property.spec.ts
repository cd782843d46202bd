import fc from 'fast-check';
import { projectAggregate } from '../../src/projects/aggregate';
import { projectStream } from '../../src/shared/projectState';
import { skillById } from '../../src/skills/state';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

// A skill write answers from the state its command produced, once the log has its events (the read
// model follows; this process's reads wait for it). The promise: that answer is exactly what a read
// of the resource from the read model gives right after (the answer equals the projected row),
// whatever the waves of concurrent writes, their group commits and batches, and whichever agents
// use the skill. Beside it, a kill check: a write's answer presenting the params of its state with the
// mask left out is caught at the count `npm test` runs.

type Write =
  | { kind: 'create'; params: Record<string, unknown> }
  | { kind: 'update'; target: number; rename: boolean; params: Record<string, unknown> }
  /** An agent using some of the skills there are (by their index among them). */
  | { kind: 'agent'; uses: number[] };

const paramsArb = fc.record(
  {
    database: fc.constantFrom('files', 'pg'),
    description: fc.string({ maxLength: 20 }),
    // Masked in the read model: the answer must hold the mask too.
    api_key: fc.constantFrom('sk-live-secret', 'another-secret'),
    connection: fc.constantFrom('postgres://u:pw-secret@h/db', 'plain'),
    tables: fc.array(fc.constantFrom('a', 'b', "o'brien"), { maxLength: 2 }),
  },
  { requiredKeys: ['database'] },
);
const writeArb: fc.Arbitrary<Write> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('create' as const), params: paramsArb }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('update' as const),
      target: fc.nat({ max: 20 }),
      rename: fc.boolean(),
      params: paramsArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('agent' as const),
      uses: fc.uniqueArray(fc.nat({ max: 20 }), { minLength: 1, maxLength: 3 }),
    }),
  },
);
/** Two skills made, an agent using the first, then the first updated: its answer names the agent. */
const usedThenUpdated: Write[][] = [
  [
    { kind: 'create', params: { database: 'files', api_key: 'sk-live-secret' } },
    { kind: 'create', params: { database: 'pg' } },
  ],
  [{ kind: 'agent', uses: [0] }],
  [{ kind: 'update', target: 0, rename: false, params: { database: 'files', tables: ["o'brien"] } }],
];
const createArb = fc.record({ kind: fc.constant('create' as const), params: paramsArb });
// Every run's first wave begins with a create, so every run has at least one answer to compare
// (a fresh seed, 1678426504, drew 46 answers in 10 runs when a run could hold none).
const wavesArb = fc
  .tuple(
    createArb,
    fc.array(fc.array(writeArb, { minLength: 0, maxLength: 12 }), { minLength: 1, maxLength: 4 }),
  )
  .map(([first, [wave, ...rest]]): Write[][] => [[first, ...(wave ?? [])], ...rest]);

describe.each(storeKinds)('the answer to a skill write (%s)', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind);
  });
  afterAll(() => app.dispose());

  /** Projects made by every run of this file's checks (the property's and the kill check's alike). */
  let round = 0;
  /** How many answers were compared, and how many of them of skills agents use. */
  const seen = { answered: 0, usedByAgents: 0 };

  /** One run: waves of concurrent writes into a project of its own, each answer held to the read after its wave. */
  const answersEqualReads = async (waves: Write[][]) => {
    const { skills, agents, projects } = app.running.services;
    const project = `answers_${round++}`;
    await projects.create(project);
    const names: string[] = [];
    let made = 0;
    let agentsMade = 0;
    for (const wave of waves) {
      // Each skill at most once per wave, so the read after the wave is the answer's version.
      const touched = new Set<string>();
      const answers = await Promise.all(
        wave.map(async (w) => {
          switch (w.kind) {
            case 'create':
              return skills.run(project, {
                type: 'CreateSkill',
                data: { name: `s_${made++}`, type: 'text2sql', params: w.params },
              });
            case 'agent': {
              const used = [...new Set(w.uses.map((i) => names[i % Math.max(1, names.length)]))];
              if (used.some((n) => n === undefined || touched.has(n))) return undefined;
              for (const n of used) touched.add(n!);
              await agents.run(project, {
                type: 'CreateAgent',
                data: {
                  name: `a_${agentsMade++}`,
                  modelName: null,
                  provider: null,
                  params: {},
                  skills: used.map((ref) => ({ ref: ref!, parameters: {} })),
                },
              });
              return undefined;
            }
            case 'update': {
              const name = names[w.target % Math.max(1, names.length)];
              if (name === undefined || touched.has(name)) return undefined;
              touched.add(name);
              touched.add(`${name}_r`);
              // A rename onto a name another skill holds is refused (409): no answer to compare.
              return skills
                .run(project, {
                  type: 'PutSkill',
                  data: {
                    ref: name,
                    type: 'text2sql',
                    params: w.params,
                    ...(w.rename ? { name: `${name}_r` } : {}),
                  },
                })
                .catch((error: { status?: number }) => {
                  if (error.status === 409) return undefined;
                  throw error;
                });
            }
            default: {
              const unknown: never = w;
              return unknown;
            }
          }
        }),
      );
      for (const answer of answers) {
        if (!answer?.skill) continue;
        seen.answered++;
        if (answer.skill.agent_ids.length > 0) seen.usedByAgents++;
        expect(answer.skill).toEqual(await skills.get(project, String(answer.skill.id)));
        expect(JSON.stringify(answer.skill.params)).not.toContain('secret');
      }
      names.splice(0, names.length, ...(await skills.list(project)).map((s) => s.name));
    }
  };

  it('given waves of concurrent creates, updates and agents using the skills, then each answer equals the skill read from the read model after the wave', async () => {
    seen.answered = 0;
    seen.usedByAgents = 0;
    const runs = propertyRuns(kind === 'postgres' ? 10 : 25);
    await fc.assert(fc.asyncProperty(wavesArb, answersEqualReads), {
      seed: propertySeed(),
      numRuns: runs,
      // Tried first on every seed: a skill an agent uses, then updated, so the check below that some
      // answer was of a skill agents use holds (a fresh seed, 1419162850, drew none in 10 runs).
      examples: [[usedThenUpdated]],
    });
    // The property says something only when there were answers (each run has one at least), some of
    // skills agents use.
    expect(seen.answered).toBeGreaterThanOrEqual(runs);
    expect(seen.usedByAgents).toBeGreaterThan(0);
  });

  it("kill check: a write's answer presenting its state's params with the mask left out is caught", async () => {
    // The bug: the answer made from the command's state (`presentSkillState`) without `maskSecrets`.
    const skills = app.running.services.skills;
    const run = skills.run;
    const spy = jest.spyOn(skills, 'run').mockImplementation(async (project, command, options) => {
      const outcome = await run(project, command, options);
      if (!outcome.skill) return outcome;
      const { state } = await app.running.ctx.commands.load(projectStream(project), projectAggregate);
      const params = skillById(state.skills, BigInt(outcome.skill.id))!.params;
      return { ...outcome, skill: { ...outcome.skill, params } };
    });
    try {
      await expectCaught(fc.asyncProperty(wavesArb, answersEqualReads), {
        seed: propertySeed(),
        numRuns: propertyRuns(kind === 'postgres' ? 10 : 25),
      });
    } finally {
      spy.mockRestore();
    }
  });
});
