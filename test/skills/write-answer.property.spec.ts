import fc from 'fast-check';
import { startTestApp, storeKinds, type TestApp } from '../support/app';

// A write answers with the row its own batch just wrote (remembered by the projection runner), not
// with a query queued behind the next batch. The promise: that answer is exactly what a read of the
// resource from the read model gives right after (cache equals uncached), whatever the waves of
// concurrent writes, their group commits and batches.

type Write =
  | { kind: 'create'; name: string; params: Record<string, unknown> }
  | { kind: 'update'; target: number; rename: boolean; params: Record<string, unknown> };

const paramsArb = fc.record(
  {
    database: fc.constantFrom('files', 'pg'),
    description: fc.string({ maxLength: 20 }),
    // Masked in the read model: the answer must hold the mask too.
    api_key: fc.constantFrom('sk-live-secret', 'another-secret'),
    tables: fc.array(fc.constantFrom('a', 'b', "o'brien"), { maxLength: 2 }),
  },
  { requiredKeys: ['database'] },
);
const writeArb: fc.Arbitrary<Write> = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), name: fc.constant(''), params: paramsArb }),
  fc.record({
    kind: fc.constant('update' as const),
    target: fc.nat({ max: 20 }),
    rename: fc.boolean(),
    params: paramsArb,
  }),
);
const wavesArb = fc.array(fc.array(writeArb, { minLength: 1, maxLength: 12 }), {
  minLength: 1,
  maxLength: 4,
});

describe.each(storeKinds)('the answer to a skill write (%s)', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind);
  });
  afterAll(() => app.dispose());

  it('given waves of concurrent creates and updates, then each answer equals the skill read from the read model after the wave', async () => {
    const skills = app.running.services.skills;
    const runner = app.running.ctx.projections;
    let remembered = 0;
    let answered = 0;
    const rememberedRow = runner.rememberedRow.bind(runner);
    runner.rememberedRow = (table, key) => {
      const row = rememberedRow(table, key);
      if (row) remembered++;
      return row;
    };
    let round = 0;
    try {
      await fc.assert(
        fc.asyncProperty(wavesArb, async (waves) => {
          const project = `answers_${round++}`;
          await app.running.services.projects.create(project);
          const names: string[] = [];
          let made = 0;
          for (const wave of waves) {
            // Each skill at most once per wave, so the read after the wave is the answer's version.
            const touched = new Set<string>();
            const answers = await Promise.all(
              wave.map(async (w) => {
                if (w.kind === 'create') {
                  const name = `s_${made++}`;
                  return skills.run(project, {
                    type: 'CreateSkill',
                    data: { name, type: 'text2sql', params: w.params },
                  });
                }
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
              }),
            );
            for (const answer of answers) {
              if (!answer?.skill) continue;
              answered++;
              expect(answer.skill).toEqual(await skills.get(project, String(answer.skill.id)));
              expect(JSON.stringify(answer.skill.params)).not.toContain('secret');
            }
            names.splice(0, names.length, ...(await skills.list(project)).map((s) => s.name));
          }
        }),
        { seed: 20261124, numRuns: kind === 'postgres' ? 10 : 25 },
      );
    } finally {
      runner.rememberedRow = rememberedRow;
    }
    // The property says something only when answers came from the remembered rows.
    expect(remembered).toBeGreaterThan(answered / 2);
  });
});
