import { Writable } from 'node:stream';
import { databaseAggregate, databaseStream } from '../../src/databases/state';
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { mariadbParameters, postgresParameters } from '../support/external';
import { eventsOf, givenDatabase, givenProject, onFreshApp, uniqueName } from '../support/world';

const connection = {
  host: '127.0.0.1',
  port: 5432,
  user: 'postgres',
  password: 'pa55-word-xyz',
  database: 'test',
};

describe.each(storeKinds)('databases API on %s', (store) => {
  let t: TestApp;
  const logLines: string[] = [];
  beforeAll(async () => {
    const sink = new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    t = await startTestApp(store, {}, { logStream: sink });
  });
  afterAll(() => t?.dispose());

  /** An integration of the test's own on the local PostgreSQL, registered with `connection`. */
  const givenPostgres = () => givenDatabase(t, { engine: 'postgres', parameters: connection });

  it('lists system databases, projects and integrations in MindsDB shapes', () =>
    onFreshApp(store, async (fresh) => {
      const res = await fresh.http.get('/api/databases').expect(200);
      expect(res.body).toEqual([
        {
          name: 'information_schema',
          type: 'system',
          id: null,
          engine: null,
          visible: true,
          deletable: false,
        },
        {
          name: 'files',
          type: 'data',
          id: null,
          engine: 'files',
          visible: true,
          deletable: false,
          class_type: 'sql',
          permanent: true,
        },
        {
          name: 'mindsdb',
          type: 'project',
          id: expect.any(Number),
          engine: null,
          visible: true,
          deletable: false,
        },
      ]);
    }));

  describe('registering an integration', () => {
    it('answers 201 and reads it back by name in any case, password masked', async () => {
      const name = uniqueName('pg_main');
      const created = await t.http
        .post('/api/databases/')
        .send({ database: { name, engine: 'postgres', parameters: connection } })
        .expect(201);
      expect(created.body).toEqual({
        name,
        engine: 'postgres',
        type: 'data',
        id: expect.any(Number),
      });
      const one = await t.http.get(`/api/databases/${name.toUpperCase()}`).expect(200);
      expect(one.body).toEqual({
        name,
        type: 'data',
        id: created.body.id,
        engine: 'postgres',
        visible: true,
        deletable: true,
        class_type: 'sql',
        permanent: false,
        connection_data: { ...connection, password: '******' },
        date_last_update: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/),
      });
    });

    it('never shows its password in the list, the events, the projection or the server log', async () => {
      const { name } = await givenPostgres();
      const list = await t.http.get('/api/databases').expect(200);
      expect(list.body.map((d: { name: string }) => d.name)).toContain(name);
      expect(JSON.stringify(list.body)).not.toContain(connection.password);
      const events = await t.http.get(`/api/events?stream=database-${name}`).expect(200);
      expect(events.body.events[0].data.parameters.password).toBe('******');
      expect(JSON.stringify(events.body)).not.toContain(connection.password);
      const duck = await t.running.ctx.duck.query('SELECT connection_data FROM databases');
      expect(JSON.stringify(duck)).not.toContain(connection.password);
      expect(logLines.join('')).not.toContain(connection.password);
    });

    it('keeps the real password in the log, for connections to use', async () => {
      const { name } = await givenPostgres();
      const { state } = await t.running.ctx.commands.load(databaseStream(name), databaseAggregate);
      expect(state.status === 'live' && state.parameters.password).toBe(connection.password);
    });

    it('PUT creates a missing integration (201)', async () => {
      const name = uniqueName('my_maria');
      const res = await t.http
        .put(`/api/databases/${name}`)
        .send({ database: { engine: 'mariadb', parameters: mariadbParameters() } })
        .expect(201);
      expect(res.body).toEqual({ name, engine: 'mariadb', type: 'data', id: expect.any(Number) });
    });

    it('answers concurrent PUTs of a new name with one 201 and the rest 200, one creation in the log', async () => {
      const statuses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          t.http
            .put('/api/databases/raced_db')
            .send({
              database: {
                engine: 'postgres',
                parameters: postgresParameters({ sslmode: `disable`, note: `w${i}` }),
              },
            })
            .then((r) => r.status),
        ),
      );
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 200)).toHaveLength(19);
      const events = await eventsOf(t, 'database-raced_db');
      expect(events.map((e) => e.type)).toEqual(['DatabaseCreated', ...Array(19).fill('DatabaseUpdated')]);
    });
  });

  describe('updating an integration', () => {
    it('refuses a PUT whose If-Match is stale (412)', async () => {
      const { name } = await givenPostgres();
      const before = await t.http.get(`/api/databases/${name}`).expect(200);
      const stale = await t.http
        .put(`/api/databases/${name}`)
        .set('If-Match', '"1"')
        .send({ database: { parameters: { ...before.body.connection_data, database: 'postgres' } } })
        .expect(412);
      expect(problemOf(stale).status).toBe(412);
    });

    it('keeps the stored password when a PUT sends the mask back (200, a new ETag)', async () => {
      const { name } = await givenPostgres();
      const before = await t.http.get(`/api/databases/${name}`).expect(200);
      const updated = await t.http
        .put(`/api/databases/${name}`)
        .set('If-Match', before.headers.etag!)
        .send({ database: { parameters: { ...before.body.connection_data, database: 'postgres' } } })
        .expect(200);
      expect(updated.body.connection_data).toEqual({
        ...connection,
        database: 'postgres',
        password: '******',
      });
      expect(updated.headers.etag).not.toBe(before.headers.etag);
      const { state } = await t.running.ctx.commands.load(databaseStream(name), databaseAggregate);
      expect(state.status === 'live' && state.parameters).toEqual({ ...connection, database: 'postgres' });
    });

    it('refuses a PUT whose parameters cannot connect (400)', async () => {
      const { name } = await givenPostgres();
      const stale = await t.http
        .put(`/api/databases/${name}`)
        .send({ database: { parameters: postgresParameters({ port: 1 }) } })
        .expect(400);
      expect(problemOf(stale).title).toBe('Connection error');
    });
  });

  it('validates engines and parameters (400 naming the field)', async () => {
    const noEngine = await t.http
      .post('/api/databases')
      .send({ database: { name: 'x1' } })
      .expect(400);
    expect(problemOf(noEngine).detail).toMatch(/database\.engine is required.*\/api\/projects/);
    const unknown = await t.http
      .post('/api/databases')
      .send({ database: { name: 'x2', engine: 'oracle', parameters: connection } })
      .expect(400);
    expect(problemOf(unknown).detail).toMatch(/Unknown engine 'oracle'/);
    const badParams = await t.http
      .post('/api/databases')
      .send({ database: { name: 'x3', engine: 'postgres', parameters: { host: 'h' } } })
      .expect(400);
    expect(problemOf(badParams).detail).toMatch(/parameters\.user/);
    const noWrapper = await t.http.post('/api/databases').send({ name: 'x4' }).expect(400);
    expect(problemOf(noWrapper).detail).toMatch(/body\.database: Must provide "database"/);
    const list = await t.http.get('/api/databases').expect(200);
    expect(list.body.map((d: { name: string }) => d.name)).not.toEqual(
      expect.arrayContaining(['x1', 'x2', 'x3', 'x4']),
    );
  });

  describe('checking the connection before recording anything', () => {
    /** Registrations that cannot connect: a closed port, an unknown database, a wrong MariaDB user. */
    const attemptUnreachable = async (name: string, requestIds: [string, string, string]) => {
      const attempt = (id: string, parameters: Record<string, unknown>, engine = 'postgres') =>
        t.http
          .post('/api/databases')
          .set('X-Request-Id', id)
          .send({ database: { name, engine, parameters } })
          .expect(400);
      const [a, b, c] = requestIds;
      return [
        await attempt(a, postgresParameters({ port: 1 })),
        await attempt(b, postgresParameters({ database: 'no_such_db_here' })),
        await attempt(c, mariadbParameters({ user: 'nobody_here' }), 'mariadb'),
      ] as const;
    };

    it('answers the same for every reason, without the driver’s words', async () => {
      const [refused, badDb, badMaria] = await attemptUnreachable(uniqueName('unreachable'), [
        'probe-a',
        'probe-b',
        'probe-c',
      ]);
      // A closed port, an unknown database and a wrong user must not be told apart by a client: that
      // would make registration a scanner of the internal network.
      const shapes = [refused, badDb, badMaria].map((r) =>
        problemOf(r)
          .detail.replace(/\(request id [^)]*\)/, '(request id)')
          .replace(/ (postgres|mariadb) server at \S+/, ' server'),
      );
      expect(new Set(shapes).size).toBe(1);
      expect(problemOf(refused)).toMatchObject({
        title: 'Connection error',
        detail: expect.stringMatching(
          /^Can't connect to db: could not connect to the postgres server at 127\.0\.0\.1:1 .*request id probe-a\)\.$/,
        ),
      });
      for (const r of [refused, badDb, badMaria])
        expect(problemOf(r).detail).not.toMatch(/ECONNREFUSED|no_such_db_here|Access denied|nobody_here/);
    });

    it('logs the reason under the request’s id', async () => {
      const ids: [string, string, string] = [uniqueName('log-a'), uniqueName('log-b'), uniqueName('log-c')];
      await attemptUnreachable(uniqueName('unreachable'), ids);
      const logged = logLines.filter((l) => l.includes('external database connection failed'));
      expect(logged.find((l) => l.includes(`"reqId":"${ids[0]}"`)) ?? '').toMatch(/ECONNREFUSED/);
      expect(logged.find((l) => l.includes(`"reqId":"${ids[1]}"`)) ?? '').toMatch(/no_such_db_here/);
      expect(logged.find((l) => l.includes(`"reqId":"${ids[2]}"`)) ?? '').toMatch(/Access denied/);
    });

    it('records nothing when it fails', async () => {
      const name = uniqueName('unreachable');
      await attemptUnreachable(name, [uniqueName('rec-a'), uniqueName('rec-b'), uniqueName('rec-c')]);
      await t.http.get(`/api/databases/${name}`).expect(404);
      expect(await eventsOf(t, `database-${name}`)).toEqual([]);
    });
  });

  it('checks the name before the parameters: an existing name is 409 even with incomplete parameters', async () => {
    await t.http
      .post('/api/databases')
      .send({ database: { name: 'named_first', engine: 'postgres', parameters: postgresParameters() } })
      .expect(201);
    const clash = await t.http
      .post('/api/databases')
      .send({ database: { name: 'NAMED_FIRST', engine: 'postgres', parameters: { host: 'h' } } })
      .expect(409);
    expect(problemOf(clash).detail).toBe('Database with name NAMED_FIRST already exists.');
    // Even with no engine or parameters at all; a new name without an engine is a 400 naming it.
    const bare = await t.http
      .post('/api/databases')
      .send({ database: { name: 'named_first' } })
      .expect(409);
    expect(problemOf(bare).detail).toBe('Database with name named_first already exists.');
    const noEngine = await t.http
      .post('/api/databases')
      .send({ database: { name: 'named_second' } })
      .expect(400);
    expect(problemOf(noEngine).detail).toMatch(/database.engine is required/);
    expect(await eventsOf(t, 'database-named_second')).toEqual([]);
  });

  describe('checking parameters without saving them (POST /api/databases/status)', () => {
    it('answers success when they connect', async () => {
      expect(
        (
          await t.http
            .post('/api/databases/status')
            .send({ engine: 'postgres', parameters: postgresParameters() })
            .expect(200)
        ).body,
      ).toEqual({
        status: 'success',
      });
    });

    it('answers connection_error with the reason when they do not', async () => {
      const failed = await t.http
        .post('/api/databases/status')
        .send({ database: { engine: 'mariadb', parameters: mariadbParameters({ port: 1 }) } })
        .expect(200);
      expect(failed.body).toEqual({
        status: 'connection_error',
        detail: expect.stringMatching(/^could not connect to the mariadb server at 127\.0\.0\.1:1 /),
      });
    });
  });

  describe('one namespace for projects and databases', () => {
    it('refuses a database named like a project (409)', async () => {
      const project = await givenProject(t, uniqueName('shared_name'));
      const clash = await t.http
        .post('/api/databases')
        .send({ database: { name: project.name.toUpperCase(), engine: 'postgres', parameters: connection } })
        .expect(409);
      expect(problemOf(clash).detail).toMatch(/Project exists with this name/);
    });

    it('refuses a project named like a database (409)', async () => {
      const { name } = await givenPostgres();
      const clash2 = await t.http.post('/api/projects').send({ name: name.toUpperCase() }).expect(409);
      expect(problemOf(clash2).detail).toMatch(/already exists/);
    });

    it('shows a project as a database of type project', async () => {
      const project = await givenProject(t, uniqueName('shared_name'));
      const asDb = await t.http.get(`/api/databases/${project.name}`).expect(200);
      expect(asDb.body).toMatchObject({ name: project.name, type: 'project', engine: null });
    });
  });

  describe('deleting', () => {
    it('refuses to delete system databases (400)', async () => {
      expect(problemOf(await t.http.delete('/api/databases/information_schema').expect(400)).detail).toMatch(
        /system/,
      );
      expect(problemOf(await t.http.delete('/api/databases/files').expect(400)).detail).toMatch(/system/);
    });

    it('deletes an integration (204): it is 404 afterwards', async () => {
      const { name } = await givenDatabase(t, { engine: 'mariadb', parameters: mariadbParameters() });
      await t.http.delete(`/api/databases/${name}`).expect(204);
      expect(problemOf(await t.http.get(`/api/databases/${name}`).expect(404)).detail).toBe(
        `Database with name ${name} does not exist.`,
      );
      expect(problemOf(await t.http.delete(`/api/databases/${name}`).expect(404)).title).toBe(
        'Database not found',
      );
    });
  });
});

describe('databases API with DB_HOST_ALLOWLIST', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { DB_HOST_ALLOWLIST: 'localhost, 127.0.0.0/8, *.db.internal' });
  });
  afterAll(() => t?.dispose());

  it('refuses to register a host outside the list before connecting, and records nothing', async () => {
    const refused = await t.http
      .post('/api/databases')
      .send({
        database: {
          name: 'outside',
          engine: 'postgres',
          parameters: postgresParameters({ host: '10.1.2.3' }),
        },
      })
      .expect(403);
    expect(problemOf(refused)).toMatchObject({
      title: 'Host not allowed',
      detail: "Host '10.1.2.3' is not in this server's allow-list of database hosts (DB_HOST_ALLOWLIST)",
    });
    expect((await t.http.get('/api/events?stream=database-outside').expect(200)).body.events).toEqual([]);
  });

  it('refuses to check a host outside the list', async () => {
    const status = await t.http
      .post('/api/databases/status')
      .send({ engine: 'mysql', parameters: mariadbParameters({ host: 'db.example.com' }) })
      .expect(403);
    expect(problemOf(status).title).toBe('Host not allowed');
  });

  it('admits a host in a listed address block', async () => {
    await t.http
      .post('/api/databases')
      .send({ database: { name: 'inside', engine: 'postgres', parameters: postgresParameters() } })
      .expect(201);
  });

  it('admits a listed host name, and shows the reason its connection failed', async () => {
    const byName = await t.http
      .post('/api/databases')
      .send({
        database: {
          name: 'by_name',
          engine: 'postgres',
          parameters: postgresParameters({ host: 'localhost', port: 1 }),
        },
      })
      .expect(400);
    // Within the allow-list there is nothing to probe: the driver's reason helps the user.
    expect(problemOf(byName).detail).toMatch(/^Can't connect to db: .*ECONNREFUSED/);
  });
});
