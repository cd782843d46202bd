/**
 * Jobs as MindsDB clients see them: CREATE/DROP/SHOW JOBS, the jobs and jobs_history tables, and
 * REST under /api/projects/{p}/jobs; and what a run leaves in the log. Time is the spec's: the
 * scheduler fires due jobs when the spec calls `tick()`. Every test builds its own world on the
 * shared app (its own project, its jobs in it, the projects its jobs make named its own) and
 * reads the app-wide tables scoped to it, so the tests pass alone and in any order.
 */
import { problemOf, querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { givenProject, uniqueName } from '../support/world';
import { eventsOf, HOUR, manualClock, NO_POLL } from './support';

const T0 = '2030-01-01T00:00:00.000Z';

describe.each(storeKinds)('jobs over SQL and REST (%s)', (store) => {
  let t: TestApp;
  const time = manualClock(T0);
  const tick = () => t.running.jobs.tick();
  const sql = async (query: string) => {
    const answer = await querySql(t, query);
    if (answer.type === 'error') throw new Error(answer.error_message);
    return answer;
  };
  const rows = async (query: string) => {
    const answer = await sql(query);
    return answer.data!.map((r) => Object.fromEntries(answer.column_names!.map((c, i) => [c, r[i]])));
  };
  const jobId = async (project: string, name: string) =>
    ((await t.http.get(`/api/projects/${project}/jobs/${name}`).expect(200)).body as { id: number }).id;

  /** A job every hour from 00:10 until the next day, with two statements (one with `;` in a string). */
  const givenHourlyJob = (project: string) =>
    sql(
      `CREATE JOB ${project}.hourly (SELECT 1; SELECT 'a;b' AS x) START '2030-01-01 00:10:00' END '2030-01-02' EVERY hour`,
    );
  const brokenJob = (project: string) =>
    `CREATE JOB ${project}.broken (SELECT 1; SELECT * FROM nowhere.t; SELECT 3)`;

  beforeAll(async () => {
    t = await startTestApp(store, NO_POLL, { clock: time.clock });
  });
  afterAll(() => t.dispose());
  beforeEach(() => time.set(T0));

  it('creates a job in SQL, shows it in SHOW JOBS, p.jobs, information_schema.JOBS and REST', async () => {
    const { name: proj } = await givenProject(t);
    // Given a job every hour from 00:10
    await givenHourlyJob(proj);
    // Then every view of it agrees
    const shown = await querySql(t, `SHOW JOBS FROM ${proj} LIKE 'hourly'`);
    expect(shown.column_names).toEqual([
      'NAME',
      'PROJECT',
      'START_AT',
      'END_AT',
      'NEXT_RUN_AT',
      'SCHEDULE_STR',
      'QUERY',
      'IF_QUERY',
      'VARIABLES',
    ]);
    expect(shown.data).toHaveLength(1);
    const [row] = await rows(
      `SELECT NAME, PROJECT, SCHEDULE_STR, QUERY, IF_QUERY FROM ${proj}.jobs WHERE NAME = 'hourly'`,
    );
    expect(row).toEqual({
      NAME: 'hourly',
      PROJECT: proj,
      SCHEDULE_STR: 'every 1 hour',
      QUERY: "SELECT 1; SELECT 'a;b' AS x",
      IF_QUERY: null,
    });
    expect(await rows(`SELECT NAME FROM information_schema.JOBS WHERE PROJECT = '${proj}'`)).toEqual([
      { NAME: 'hourly' },
    ]);
    const described = await querySql(t, `DESCRIBE JOB ${proj}.hourly`);
    expect(described.data).toHaveLength(1);
    expect(described.column_names).toEqual(shown.column_names);
    const rest = await t.http.get(`/api/projects/${proj}/jobs/hourly`).expect(200);
    expect(rest.body).toEqual({
      id: expect.any(Number),
      name: 'hourly',
      project: proj,
      start_at: '2030-01-01 00:10:00.000000',
      end_at: '2030-01-02 00:00:00.000000',
      next_run_at: '2030-01-01 00:10:00.000000',
      schedule_str: 'every 1 hour',
      query: "SELECT 1; SELECT 'a;b' AS x",
      if_query: null,
      variables: {},
    });
  });

  it('runs a due job once per tick, through the SQL service, recording each statement', async () => {
    const { name: proj } = await givenProject(t);
    await givenHourlyJob(proj);
    const id = await jobId(proj, 'hourly');
    // When the scheduler looks before the start, nothing runs
    await tick();
    expect(await eventsOf(t, `job-runs-${id}`)).toEqual([]);
    // When the start comes, and the scheduler looks twice
    time.set('2030-01-01T00:10:00.000Z');
    await tick();
    await tick();
    // Then one run: started, each statement's outcome, finished
    const events = await eventsOf(t, `job-runs-${id}`);
    expect(events.map((e) => e.type)).toEqual([
      'JobRunStarted',
      'JobStatementRan',
      'JobStatementRan',
      'JobRunFinished',
    ]);
    expect(events[0]!.data).toMatchObject({ run: 1, tick: '2030-01-01T00:10:00.000Z', previousTick: null });
    expect(events.slice(1, 3).map((e) => e.data)).toEqual([
      expect.objectContaining({ index: 0, query: 'SELECT 1', outcome: 'rows', rows: 1, error: null }),
      expect.objectContaining({ index: 1, query: "SELECT 'a;b' AS x", outcome: 'rows', rows: 1 }),
    ]);
    // And the history and the next run say so
    expect(await rows(`SELECT * FROM ${proj}.jobs_history WHERE NAME = 'hourly'`)).toEqual([
      {
        NAME: 'hourly',
        PROJECT: proj,
        RUN_START: expect.anything(),
        RUN_END: expect.anything(),
        ERROR: null,
        QUERY: "SELECT 1; SELECT 'a;b' AS x; ",
      },
    ]);
    expect((await t.http.get(`/api/projects/${proj}/jobs/hourly`).expect(200)).body.next_run_at).toBe(
      '2030-01-01 01:10:00.000000',
    );
  });

  it('runs ticks missed while nothing ran once, not once each, and stops after END', async () => {
    const { name: proj } = await givenProject(t);
    // Given the hourly job, run at its start
    await givenHourlyJob(proj);
    const id = await jobId(proj, 'hourly');
    time.set('2030-01-01T00:10:00.000Z');
    await tick();
    // When five hours pass unseen
    time.set('2030-01-01T05:30:00.000Z');
    await tick();
    // Then one more run, for the latest tick, naming the one before
    const started = (await eventsOf(t, `job-runs-${id}`)).filter((e) => e.type === 'JobRunStarted');
    expect(started.map((e) => e.data.tick)).toEqual(['2030-01-01T00:10:00.000Z', '2030-01-01T05:10:00.000Z']);
    expect(started[1]!.data.previousTick).toBe('2030-01-01T00:10:00.000Z');
    // When the end has passed: the last tick before it runs, then no more
    time.set('2030-01-03T00:00:00.000Z');
    await tick();
    await tick();
    const ticks = (await eventsOf(t, `job-runs-${id}`))
      .filter((e) => e.type === 'JobRunStarted')
      .map((e) => e.data.tick);
    expect(ticks).toEqual([
      '2030-01-01T00:10:00.000Z',
      '2030-01-01T05:10:00.000Z',
      '2030-01-01T23:10:00.000Z',
    ]);
    expect((await t.http.get(`/api/projects/${proj}/jobs/hourly`).expect(200)).body.next_run_at).toBeNull();
  });

  it('runs a job without EVERY once, as the job: its actor and interface on what it writes', async () => {
    const { name: proj } = await givenProject(t);
    const made = uniqueName('made_by_job');
    await sql(`CREATE JOB ${proj}.once (CREATE PROJECT ${made}; SELECT 1)`);
    const id = await jobId(proj, 'once');
    await tick();
    time.advance(48 * HOUR);
    await tick();
    const runs = (await eventsOf(t, `job-runs-${id}`)).filter((e) => e.type === 'JobRunStarted');
    expect(runs).toHaveLength(1);
    const [created] = await eventsOf(t, `project-${made}`);
    expect(created).toMatchObject({ type: 'ProjectCreated', actor: `system:job:${id}`, interface: 'job' });
    expect((await t.http.get(`/api/projects/${proj}/jobs/once`).expect(200)).body.next_run_at).toBeNull();
  });

  it('stops a run at its first failing statement, and says why in the history', async () => {
    const { name: proj } = await givenProject(t);
    await sql(brokenJob(proj));
    const id = await jobId(proj, 'broken');
    await tick();
    const events = await eventsOf(t, `job-runs-${id}`);
    expect(events.map((e) => e.type)).toEqual([
      'JobRunStarted',
      'JobStatementRan',
      'JobStatementRan',
      'JobRunFailed',
    ]);
    expect(events[2]!.data).toMatchObject({ outcome: 'error', error: expect.stringMatching(/nowhere/) });
    const history = (await t.http.get(`/api/projects/${proj}/jobs/broken/history`).expect(200))
      .body as Record<string, unknown>[];
    expect(history).toEqual([
      expect.objectContaining({
        name: 'broken',
        project: proj,
        status: 'failed',
        error: expect.stringMatching(/nowhere/),
        query: 'SELECT 1; SELECT * FROM nowhere.t; ',
      }),
    ]);
  });

  it('skips a run when its IF query returns no rows, and records the skip', async () => {
    const { name: proj } = await givenProject(t);
    const neverMade = uniqueName('never_made');
    await sql(`CREATE JOB ${proj}.guarded (CREATE PROJECT ${neverMade}) IF (SELECT 1 WHERE 1 = 0)`);
    const id = await jobId(proj, 'guarded');
    await tick();
    const events = await eventsOf(t, `job-runs-${id}`);
    expect(events.map((e) => e.type)).toEqual(['JobRunStarted', 'JobRunSkipped']);
    expect(events[1]!.data.reason).toBe('The IF query returned no rows');
    expect(await eventsOf(t, `project-${neverMade}`)).toEqual([]);
    expect(
      await rows(
        `SELECT STATUS FROM information_schema.JOB_RUNS WHERE NAME = 'guarded' AND PROJECT = '${proj}'`,
      ),
    ).toEqual([{ STATUS: 'skipped' }]);
  });

  it('shows every job history in log.jobs_history', async () => {
    // Given jobs in two projects of the test's own, each run once: finished, failed and skipped
    const { name: first } = await givenProject(t);
    const { name: second } = await givenProject(t);
    await givenHourlyJob(first);
    await sql(`CREATE JOB ${first}.once (SELECT 1)`);
    await sql(brokenJob(second));
    await sql(
      `CREATE JOB ${second}.guarded (CREATE PROJECT ${uniqueName('never_made')}) IF (SELECT 1 WHERE 1 = 0)`,
    );
    time.set('2030-01-01T00:10:00.000Z');
    await tick();
    // Then log.jobs_history holds the history of every one of them, whatever its project (the
    // rows of other tests' projects left aside)
    const ours = (await rows('SELECT NAME, PROJECT FROM log.jobs_history')).filter(
      (r) => r.PROJECT === first || r.PROJECT === second,
    );
    expect(new Set(ours.map((r) => `${r.PROJECT}.${r.NAME}`))).toEqual(
      new Set([`${first}.hourly`, `${first}.once`, `${second}.broken`, `${second}.guarded`]),
    );
  });

  it('refuses what it cannot take, naming it', async () => {
    const { name: proj } = await givenProject(t);
    await sql(`CREATE JOB ${proj}.once (SELECT 1)`);
    const duplicate = await querySql(t, `CREATE JOB ${proj}.once (SELECT 1)`);
    expect(duplicate).toMatchObject({
      type: 'error',
      error_message: expect.stringMatching(/Job already exists: once/),
    });
    expect(await querySql(t, `CREATE JOB IF NOT EXISTS ${proj}.once (SELECT 2)`)).toMatchObject({
      type: 'ok',
    });
    const period = await querySql(t, `CREATE JOB ${proj}.bad (SELECT 1) EVERY 2 fortnights`);
    expect(period.error_message).toMatch(/Unknown period: fortnights/);
    const statement = await querySql(t, `CREATE JOB ${proj}.bad (SELECT 1; CREATE SKILLZ x USING a = 1)`);
    expect(statement.error_message).toMatch(/Unable to parse: CREATE SKILLZ x USING a = 1: syntax error/);
    const forbidden = await querySql(t, `CREATE JOB ${proj}.bad (UPDATE ${proj}.models name = 'x')`);
    expect(forbidden.error_message).toMatch(new RegExp(`Unable to parse: UPDATE ${proj}.models`));
    const date = await querySql(t, `CREATE JOB ${proj}.bad (SELECT 1) START 'soon'`);
    expect(date.error_message).toMatch(/Can't parse date: soon/);
    expect(await querySql(t, `DROP JOB ${proj}.nope`)).toMatchObject({
      type: 'error',
      error_message: expect.stringMatching(/Job with name nope does not exist/),
    });
    expect(await querySql(t, `DROP JOB IF EXISTS ${proj}.nope`)).toMatchObject({ type: 'ok' });
  });

  it('creates, reads and deletes a job over REST as MindsDB', async () => {
    const { name: proj } = await givenProject(t);
    const created = await t.http
      .post(`/api/projects/${proj}/jobs`)
      .send({
        job: { name: 'rest_job', query: 'SELECT 1', schedule_str: 'every 2 days', start_at: '2030-02-01' },
      })
      .expect(200);
    expect(created.body).toMatchObject({
      name: 'rest_job',
      schedule_str: 'every 2 days',
      start_at: '2030-02-01 00:00:00.000000',
      next_run_at: '2030-02-01 00:00:00.000000',
    });
    const list = (await t.http.get(`/api/projects/${proj}/jobs`).expect(200)).body as { name: string }[];
    expect(list.map((j) => j.name)).toContain('rest_job');
    expect(
      problemOf(
        await t.http
          .post(`/api/projects/${proj}/jobs`)
          .send({ job: { name: 'rest_job', query: 'SELECT 1' } })
          .expect(409),
      ),
    ).toMatchObject({ status: 409 });
    expect(
      problemOf(
        await t.http
          .post(`/api/projects/${proj}/jobs`)
          .send({ job: { name: 'x', query: 'SELECT 1', schedule_str: 'sometimes maybe' } })
          .expect(400),
      ).detail,
    ).toMatch(/Can't parse schedule/);
    expect(
      problemOf(
        await t.http
          .post(`/api/projects/${proj}/jobs`)
          .send({ job: { name: 'x' } })
          .expect(400),
      ).detail,
    ).toMatch(/query/);
    await t.http.delete(`/api/projects/${proj}/jobs/rest_job`).expect(204);
    expect(problemOf(await t.http.get(`/api/projects/${proj}/jobs/rest_job`).expect(404)).title).toBe(
      'Job not found',
    );
    expect(problemOf(await t.http.get(`/api/projects/${uniqueName('nope')}/jobs`).expect(404)).title).toBe(
      'Project not found',
    );
  });

  it('drops a job with its history; deleting a project deletes its jobs', async () => {
    // Given a job that ran (and failed)
    const { name: proj } = await givenProject(t);
    await sql(brokenJob(proj));
    await tick();
    const brokenHistory = () =>
      rows(`SELECT NAME FROM log.jobs_history WHERE NAME = 'broken' AND PROJECT = '${proj}'`);
    expect(await brokenHistory()).toEqual([{ NAME: 'broken' }]);
    await sql(`DROP JOB ${proj}.broken`);
    expect(await brokenHistory()).toEqual([]);
    const temp = uniqueName('temp');
    await sql(`CREATE PROJECT ${temp}`);
    await sql(`CREATE JOB ${temp}.j (SELECT 1) EVERY 1 minute`);
    await tick();
    expect(await rows(`SELECT NAME FROM information_schema.JOBS WHERE PROJECT = '${temp}'`)).toEqual([
      { NAME: 'j' },
    ]);
    await sql(`DROP PROJECT ${temp}`);
    expect(await rows(`SELECT NAME FROM information_schema.JOBS WHERE PROJECT = '${temp}'`)).toEqual([]);
    expect(await rows(`SELECT NAME FROM information_schema.JOBS_HISTORY WHERE PROJECT = '${temp}'`)).toEqual(
      [],
    );
    const log = await eventsOf(t, `project-${temp}`);
    expect(log.map((e) => e.type).slice(-2)).toEqual(['JobDeleted', 'ProjectDeleted']);
  });
});
