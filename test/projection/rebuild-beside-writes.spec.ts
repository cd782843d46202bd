import { projectStream } from '../../src/shared/projectState';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { explain, rebuildDifferences } from '../support/promise-rebuild';

/**
 * A rebuild of a running app (`ProjectionRunner.rebuild`: the background rebuild of a read model
 * that does not belong to its log, `npm run replay`'s) drops the tables and replays the log while
 * events keep coming. A batch under way, or one read from the old tables' cursor, must neither
 * write into tables being dropped ("Table with name events does not exist!", which stopped the read
 * model until a restart) nor be written into the new ones, whose cursor is back at the log's start
 * (its events would skip everything before them).
 *
 * The events are appended to the log directly, as another process on the same log would: a
 * request served meanwhile reads tables that are being made again (what a read during a rebuild
 * answers is not this spec's subject).
 */
describe.each(storeKinds)('a rebuild beside writes (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    // Small batches, so that a rebuild and the live batches interleave many times.
    t = await startTestApp(kind, { PROJECTION_BATCH_SIZE: '50' });
  });
  afterAll(() => t.dispose());

  const names = (writer: number, count: number) =>
    Array.from({ length: count }, (_, i) => `p_${writer}_${i}`);
  const appendProjects = async (writer: number, count: number) => {
    for (const name of names(writer, count))
      await t.running.ctx.log.append(
        projectStream(name),
        [{ type: 'ProjectCreated', data: { name, createdAt: new Date().toISOString() } }],
        0n,
      );
  };

  it('given a log of writes, when the read model is rebuilt twice while eight writers keep appending, then both rebuilds end, the read model stays up and equals one rebuilt from scratch, and every project is listed', async () => {
    await Promise.all(Array.from({ length: 8 }, (_, w) => appendProjects(w, 40)));
    const appending = Promise.all(Array.from({ length: 8 }, (_, w) => appendProjects(100 + w, 40)));
    const first = await t.running.ctx.projections.rebuild();
    const second = await t.running.ctx.projections.rebuild();
    await appending;
    await t.running.ctx.projections.catchUp();

    expect(first.events).toBeGreaterThan(0);
    expect(second.events).toBeGreaterThanOrEqual(first.events);
    expect(t.running.ctx.projections.failure).toBeNull();
    const differences = await rebuildDifferences(t, 1000);
    if (differences.length) throw new Error(explain('rebuilt beside writes', differences, []));
    const listed = (await t.http.get('/api/projects').expect(200)).body as { name: string }[];
    expect(new Set(listed.map((p) => p.name))).toEqual(
      new Set([
        'mindsdb',
        ...Array.from({ length: 8 }, (_, w) => [...names(w, 40), ...names(100 + w, 40)]).flat(),
      ]),
    );
  });
});
