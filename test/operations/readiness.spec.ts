/**
 * GET /api/health and GET /api/ready, as a load balancer asks them: alive while the process
 * serves; ready only while its read model follows the log, on both stores.
 */
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenProject, uniqueName } from '../support/world';
import { scrape } from './exposition';

type ReadyBody = { status: string; position: string; log_head: string; lag: number };

/** Asks GET /api/ready until it answers `status` (the log's head is shared for half a second). */
const readyUntil = async (t: TestApp, status: 200 | 503) => {
  for (let i = 0; i < 200; i++) {
    const res = await t.http.get('/api/ready');
    if (res.status === status) return res;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`GET /api/ready never answered ${status}`);
};

/** A project appended to the log directly: the held runner cannot have applied it. */
const appendProject = async (t: TestApp) => {
  const name = uniqueName('behind');
  const appended = await t.running.ctx.log.append(
    `project-${name}`,
    [{ type: 'ProjectCreated', data: { name, createdAt: new Date().toISOString() } }],
    0n,
  );
  return appended.lastPosition;
};

/** A valid `FileUploaded` whose bytes exist nowhere: the contract takes it, the file projection cannot. */
const appendUnprojectableEvent = async (t: TestApp) =>
  (
    await t.running.ctx.log.append(
      'file-lost_bytes',
      [
        {
          type: 'FileUploaded',
          data: {
            name: 'lost_bytes',
            originalName: 'lost.csv',
            digest: 'f'.repeat(64),
            size: 4,
            format: 'csv',
            csv: { delimiter: ',', quote: '"', escape: '"', header: true },
            columns: [{ name: 'a', type: 'VARCHAR' }],
            rowCount: 1,
            uploadedAt: new Date().toISOString(),
          },
        },
      ],
      0n,
    )
  ).lastPosition;

describe.each(storeKinds)('health and readiness (event store: %s)', (kind) => {
  describe('a read model that follows the log', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp(kind, { READY_MAX_LAG_EVENTS: '0' });
    });
    afterAll(async () => t.dispose());

    it('answers 200 {status: "ok"} to GET /api/health', async () => {
      const res = await t.http.get('/api/health').expect(200);
      expect(res.body).toEqual({ status: 'ok' });
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('answers 200 to GET /api/ready with where the read model and the log stand', async () => {
      const { name } = await givenProject(t);
      // A read waits for the read model to include the write (answered ahead of it); status does not.
      await t.http.get(`/api/projects/${name}`).expect(200);
      const status = (await t.http.get('/api/status').expect(200)).body.read_model as { position: string };
      const res = await t.http.get('/api/ready').expect(200);
      expect(res.body as ReadyBody).toEqual({
        status: 'ready',
        position: status.position,
        log_head: status.position,
        lag: 0,
      });
    });

    it('given the runner held behind the log, then 503 problem naming how far behind, and 200 once released', async () => {
      const held = t.running.ctx.projections.hold();
      let last: bigint;
      try {
        await appendProject(t);
        last = await appendProject(t);
        const res = await readyUntil(t, 503);
        expect(problemOf(res)).toEqual({
          title: 'Not ready',
          status: 503,
          detail: expect.stringMatching(
            /^This process should not take traffic yet: the read model is 2 events behind the log \(at \d+, the log at \d+; READY_MAX_LAG_EVENTS is 0\)\.$/,
          ),
        });
        expect(problemOf(res).detail).toContain(`the log at ${last}`);
        expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        // The metrics say the same.
        const s = await scrape(t);
        expect(s.value('mindledger_read_model_lag_events')).toBe(2);
        expect(s.value('mindledger_event_log_head_position')).toBe(Number(last));
      } finally {
        held.release();
      }
      await t.running.ctx.projections.waitFor(last);
      const ready = await readyUntil(t, 200);
      expect(ready.body as ReadyBody).toMatchObject({ status: 'ready', log_head: String(last), lag: 0 });
    });
  });

  describe('a tolerance of a few events', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp(kind, { READY_MAX_LAG_EVENTS: '5' });
    });
    afterAll(async () => t.dispose());

    it('given the read model 2 events behind, then still ready, saying so', async () => {
      const held = t.running.ctx.projections.hold();
      try {
        await appendProject(t);
        const last = await appendProject(t);
        // Asked until the shared head includes the appends.
        let body: ReadyBody | undefined;
        for (let i = 0; i < 100 && body?.log_head !== String(last); i++) {
          body = (await t.http.get('/api/ready').expect(200)).body as ReadyBody;
          await new Promise((r) => setTimeout(r, 25));
        }
        expect(body).toEqual({
          status: 'ready',
          position: String(last - 2n),
          log_head: String(last),
          lag: 2,
        });
      } finally {
        held.release();
      }
    });
  });

  describe('a read model stopped at an event it cannot apply', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp(kind);
    });
    afterAll(async () => t.dispose());

    it('answers 503 naming the event, the projection and why; alive all the same', async () => {
      const poison = await appendUnprojectableEvent(t);
      await t.running.ctx.projections.catchUp().catch(() => undefined);
      const res = await readyUntil(t, 503);
      const problem = problemOf(res);
      expect(problem.title).toBe('Not ready');
      expect(problem.detail).toContain(
        `the read model is stopped at event ${poison}: projection file-tables cannot apply event ${poison} (FileUploaded)`,
      );
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await t.http.get('/api/health').expect(200)).body).toEqual({ status: 'ok' });
      expect((await scrape(t)).value('mindledger_read_model_failed')).toBe(1);
    });
  });
});
