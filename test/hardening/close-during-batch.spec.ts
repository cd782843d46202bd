/**
 * Closing the service while its read model writes a batch: the DuckDB writer was closed under the
 * running batch, and the process died (SIGSEGV in DuckDB; CI lost a whole jest worker to it). Now
 * closing waits for the batch; the next start on the same files finds every event projected.
 */
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { uniqueName } from '../support/world';

/** Projects appended to the log directly, while the runner is held: none is applied yet. */
const appendProjects = async (t: TestApp, count: number) => {
  const names: string[] = [];
  let last = 0n;
  for (let i = 0; i < count; i++) {
    const name = uniqueName('closing');
    names.push(name);
    last = (
      await t.running.ctx.log.append(
        `project-${name}`,
        [{ type: 'ProjectCreated', data: { name, createdAt: new Date().toISOString() } }],
        0n,
      )
    ).lastPosition;
  }
  return { names, last };
};

/**
 * Holds the writer's next COMMIT back by `ms` (DuckDB runs it then, unchanged): the close starts
 * while the batch is written. Resolves `entered` when the batch reaches it.
 */
const slowNextCommit = (t: TestApp, ms: number, order: string[]) => {
  const writer = t.running.ctx.duck.writer;
  const run = writer.run.bind(writer);
  let entered!: () => void;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  let armed = true;
  writer.run = async (...args: Parameters<typeof run>) => {
    if (!armed || !String(args[0]).includes('COMMIT')) return run(...args);
    armed = false;
    entered();
    await new Promise((r) => setTimeout(r, ms));
    const result = await run(...args);
    order.push('batch committed');
    return result;
  };
  return reached;
};

describe.each(storeKinds)('closing while a batch is written (event store: %s)', (kind) => {
  it('given a batch being written, then closing waits for it, and a restart has every project', async () => {
    let t = await startTestApp(kind);
    try {
      const order: string[] = [];
      const held = t.running.ctx.projections.hold();
      const { names } = await appendProjects(t, 5);
      const writing = slowNextCommit(t, 500, order);
      held.release();
      await writing;
      await t.stop();
      order.push('closed');
      expect(order).toEqual(['batch committed', 'closed']);

      t = await t.restart();
      const { last } = await appendProjects(t, 1);
      await t.running.ctx.projections.waitFor(last);
      const listed = (await t.http.get('/api/projects').expect(200)).body as { name: string }[];
      expect(listed.map((p) => p.name)).toEqual(expect.arrayContaining(names));
    } finally {
      await t.dispose();
    }
  });
});
