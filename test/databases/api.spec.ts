import { Writable } from 'node:stream';
import { databaseAggregate, databaseStream } from '../../src/databases/aggregate';
import { problemOf, startTestApp, storeKinds, type TestApp } from '../support/app';
import { mariadbParameters, postgresParameters } from '../support/external';

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
  afterAll(() => t.dispose());

  it('lists system databases, projects and integrations in MindsDB shapes', async () => {
    const res = await t.http.get('/api/databases').expect(200);
    expect(res.body).toEqual([
      { name: 'information_schema', type: 'system', id: null, engine: null, visible: true, deletable: false },
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
  });

  it('registers an integration, masks its password everywhere, and keeps it in the log', async () => {
    const created = await t.http
      .post('/api/databases/')
      .send({ database: { name: 'pg_main', engine: 'postgres', parameters: connection } })
      .expect(201);
    expect(created.body).toEqual({
      name: 'pg_main',
      engine: 'postgres',
      type: 'data',
      id: expect.any(Number),
    });

    const one = await t.http.get('/api/databases/PG_MAIN').expect(200);
    expect(one.body).toEqual({
      name: 'pg_main',
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
    const list = await t.http.get('/api/databases').expect(200);
    expect(JSON.stringify(list.body)).not.toContain(connection.password);
    const events = await t.http.get('/api/events?stream=database-pg_main').expect(200);
    expect(events.body.events[0].data.parameters.password).toBe('******');
    expect(JSON.stringify(events.body)).not.toContain(connection.password);
    const duck = await t.running.ctx.duck.query('SELECT connection_data FROM databases');
    expect(JSON.stringify(duck)).not.toContain(connection.password);
    expect(logLines.join('')).not.toContain(connection.password);

    // The log itself has the real secret: it is what a connection will use.
    const { state } = await t.running.ctx.commands.load(databaseStream('pg_main'), databaseAggregate);
    expect(state.status === 'live' && state.parameters.password).toBe(connection.password);
  });

  it('keeps the stored password when a PUT sends the mask back, and checks If-Match', async () => {
    const before = await t.http.get('/api/databases/pg_main').expect(200);
    const stale = await t.http
      .put('/api/databases/pg_main')
      .set('If-Match', '"1"')
      .send({ database: { parameters: { ...before.body.connection_data, database: 'postgres' } } })
      .expect(412);
    expect(problemOf(stale).status).toBe(412);

    const updated = await t.http
      .put('/api/databases/pg_main')
      .set('If-Match', before.headers.etag!)
      .send({ database: { parameters: { ...before.body.connection_data, database: 'postgres' } } })
      .expect(200);
    expect(updated.body.connection_data).toEqual({ ...connection, database: 'postgres', password: '******' });
    expect(updated.headers.etag).not.toBe(before.headers.etag);
    const { state } = await t.running.ctx.commands.load(databaseStream('pg_main'), databaseAggregate);
    expect(state.status === 'live' && state.parameters).toEqual({ ...connection, database: 'postgres' });
  });

  it('PUT creates a missing integration (201)', async () => {
    const res = await t.http
      .put('/api/databases/my_maria')
      .send({ database: { engine: 'mariadb', parameters: mariadbParameters() } })
      .expect(201);
    expect(res.body).toEqual({ name: 'my_maria', engine: 'mariadb', type: 'data', id: expect.any(Number) });
  });

  it('validates engines and parameters (400 naming the field)', async () => {
    const noEngine = await t.http
      .post('/api/databases')
      .send({ database: { name: 'x1' } })
      .expect(400);
    expect(problemOf(noEngine).detail).toMatch(/body\.database\.engine: .*\/api\/projects/);
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

  it('checks the connection before recording anything: the driver says why it failed', async () => {
    const refused = await t.http
      .post('/api/databases')
      .send({
        database: { name: 'unreachable', engine: 'postgres', parameters: postgresParameters({ port: 1 }) },
      })
      .expect(400);
    expect(problemOf(refused)).toMatchObject({
      title: 'Connection error',
      detail: expect.stringMatching(/^Can't connect to db: .*ECONNREFUSED/),
    });
    const badDb = await t.http
      .post('/api/databases')
      .send({
        database: {
          name: 'unreachable',
          engine: 'postgres',
          parameters: postgresParameters({ database: 'no_such_db_here' }),
        },
      })
      .expect(400);
    expect(problemOf(badDb).detail).toMatch(/no_such_db_here/);
    const badMaria = await t.http
      .post('/api/databases')
      .send({
        database: {
          name: 'unreachable',
          engine: 'mariadb',
          parameters: mariadbParameters({ user: 'nobody_here' }),
        },
      })
      .expect(400);
    expect(problemOf(badMaria).detail).toMatch(/Access denied/);
    await t.http.get('/api/databases/unreachable').expect(404);
    const log = await t.http.get('/api/events?stream=database-unreachable').expect(200);
    expect(log.body.events).toEqual([]);
    const stale = await t.http
      .put('/api/databases/pg_main')
      .send({ database: { parameters: postgresParameters({ port: 1 }) } })
      .expect(400);
    expect(problemOf(stale).title).toBe('Connection error');
  });

  it('checks parameters without saving them (POST /api/databases/status)', async () => {
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
    const failed = await t.http
      .post('/api/databases/status')
      .send({ database: { engine: 'mariadb', parameters: mariadbParameters({ port: 1 }) } })
      .expect(200);
    expect(failed.body).toEqual({
      status: 'connection_error',
      detail: expect.stringMatching(/ECONNREFUSED/),
    });
  });

  it('keeps one namespace for projects and databases', async () => {
    await t.http.post('/api/projects').send({ name: 'shared_name' }).expect(201);
    const clash = await t.http
      .post('/api/databases')
      .send({ database: { name: 'Shared_Name', engine: 'postgres', parameters: connection } })
      .expect(409);
    expect(problemOf(clash).detail).toMatch(/Project exists with this name/);
    const clash2 = await t.http.post('/api/projects').send({ name: 'PG_MAIN' }).expect(409);
    expect(problemOf(clash2).detail).toMatch(/already exists/);
    const asDb = await t.http.get('/api/databases/shared_name').expect(200);
    expect(asDb.body).toMatchObject({ name: 'shared_name', type: 'project', engine: null });
  });

  it('refuses to delete system databases and deletes integrations', async () => {
    expect(problemOf(await t.http.delete('/api/databases/information_schema').expect(400)).detail).toMatch(
      /system/,
    );
    expect(problemOf(await t.http.delete('/api/databases/files').expect(400)).detail).toMatch(/system/);
    await t.http.delete('/api/databases/my_maria').expect(204);
    expect(problemOf(await t.http.get('/api/databases/my_maria').expect(404)).detail).toBe(
      'Database with name my_maria does not exist.',
    );
    expect(problemOf(await t.http.delete('/api/databases/my_maria').expect(404)).title).toBe(
      'Database not found',
    );
  });
});
