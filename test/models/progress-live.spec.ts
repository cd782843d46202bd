import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenSharedFile } from '../support/modelsData';
import { givenProject } from '../support/world';

/**
 * A training's progress reports are appended while nobody waits for them: the read model must take
 * them in as they come (on one node nothing else tells it), so what a user polls moves.
 */
describe.each(storeKinds)('progress seen while a model trains (%s)', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(store);
  });
  afterAll(async () => {
    await t?.running.services.models.idle();
    await t?.dispose();
  });

  it('given a training started and not waited for, when DESCRIBE … .progress is polled, then it shows the phases and percentages the log holds before the training completes', async () => {
    const rentals = await givenSharedFile(t, 'home_rentals.csv');
    const project = (await givenProject(t)).name;
    const created = await querySql(
      t,
      `CREATE MODEL ${project}.rentals FROM files (SELECT * FROM ${rentals}) PREDICT rental_price`,
    );
    expect(created.type).toBe('table');
    const seen: { name: string; percent: number }[] = [];
    for (;;) {
      const progress = await querySql(t, `DESCRIBE ${project}.rentals.progress`);
      expect(progress.column_names).toEqual(['current', 'total', 'name', 'percent', 'rows', 'status']);
      const [, , name, percent, , status] = progress.data![0] as [
        number,
        number,
        string,
        number,
        number,
        string,
      ];
      if (status === 'complete') break;
      expect(status).not.toBe('error');
      seen.push({ name, percent });
      await new Promise((r) => setTimeout(r, 10));
    }
    // Before the training completed, the read model had its reports: some phase past reading's
    // start, with a percentage above zero.
    expect(seen.some((s) => s.percent > 0)).toBe(true);
    const percents = seen.map((s) => s.percent);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
  }, 120_000);
});
