/**
 * Logs that tell what happened, each line with the id of the request it belongs to: SQL errors
 * (code and kind, never the statement's text), uploads (started, progress, received, stored or
 * failed), trainings (started, rows, phases, completed).
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { uploadLog } from '../../src/files/uploadLog';
import { withRequest } from '../../src/shared/requestContext';
import { startTestApp, type TestApp } from '../support/app';
import { csvFile } from '../support/modelsData';
import { givenProject, uniqueName } from '../support/world';

type Line = Record<string, unknown> & { msg: string };

/** A log sink: every line written, parsed. */
const logSink = () => {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      raw.push(...String(chunk).trim().split('\n'));
      done();
    },
  });
  return {
    stream,
    text: () => raw.join('\n'),
    lines: (): Line[] => raw.map((l) => JSON.parse(l) as Line),
    /** The lines of one request, in order. */
    of: (reqId: string) => raw.map((l) => JSON.parse(l) as Line).filter((l) => l.reqId === reqId),
  };
};

describe('logs of a running service', () => {
  const sink = logSink();
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', {}, { logStream: sink.stream });
  });
  afterAll(async () => {
    await t.running.services.models.idle();
    await t.dispose();
  });

  it('given SQL that fails, then a line per statement with the request id, the kind and the code, never the text', async () => {
    const reqId = uniqueName('sql-error');
    const select = await t.http
      .post('/api/sql/query')
      .set('X-Request-Id', reqId)
      .send({ query: "SELECT card FROM no_such_table WHERE password = 'hunter2-literal'" })
      .expect(200);
    expect(select.body.type).toBe('error');
    const create = await t.http
      .post('/api/sql/query')
      .set('X-Request-Id', reqId)
      .send({
        query: `CREATE DATABASE ${uniqueName('db')} WITH ENGINE = 'no_such_engine', PARAMETERS = {"password": "pw-secret-literal"}`,
      })
      .expect(200);
    expect(create.body.type).toBe('error');

    const failures = sink.of(reqId).filter((l) => l.msg === 'SQL statement failed');
    expect(failures).toEqual([
      expect.objectContaining({
        level: 30,
        via: 'sql',
        statement: 'select',
        sqlError: select.body.error_code,
      }),
      expect.objectContaining({
        level: 30,
        via: 'sql',
        statement: 'create_database',
        sqlError: create.body.error_code,
      }),
    ]);
    expect(sink.text()).not.toContain('hunter2-literal');
    expect(sink.text()).not.toContain('pw-secret-literal');
    expect(sink.text()).not.toContain('no_such_table');
  });

  it('given an upload, then started, received and stored lines with its request id, rows and columns', async () => {
    const reqId = uniqueName('upload');
    const name = uniqueName('uploaded');
    const file = csvFile(
      Array.from({ length: 25 }, (_, i) => ({ id: i, city: `city ${i}`, price: i * 1.5 })),
      name,
    );
    await t.http.put(`/api/files/${name}`).set('X-Request-Id', reqId).attach('file', file).expect(200);

    const lines = sink.of(reqId).filter((l) => l.msg.startsWith('upload'));
    expect(lines.map((l) => l.msg)).toEqual(['upload started', 'upload received', 'upload stored']);
    expect(lines[0]).toMatchObject({ file: name, source: 'multipart', declaredBytes: expect.any(Number) });
    expect(lines[2]).toMatchObject({
      file: name,
      rows: 25,
      columns: 3,
      format: 'csv',
      bytes: expect.any(Number),
    });
    expect(lines[1]!.bytes).toBe(lines[2]!.bytes);
  });

  it('given an upload refused, then a failed line naming why by its title, not the file', async () => {
    const reqId = uniqueName('empty-upload');
    await t.http
      .put(`/api/files/${uniqueName('empty')}`)
      .set('X-Request-Id', reqId)
      .attach('file', Buffer.alloc(0), 'empty.csv')
      .expect(400);
    expect(sink.of(reqId).find((l) => l.msg === 'upload failed')).toMatchObject({
      reason: 'Empty file',
      bytes: 0,
    });
  });

  it('given a training, then started, rows read, each phase and completed, with the id of the request that started it', async () => {
    const { name: project } = await givenProject(t);
    const data = uniqueName('doubling');
    await t.http
      .put(`/api/files/${data}`)
      .attach(
        'file',
        csvFile(
          Array.from({ length: 60 }, (_, i) => ({ x: i, y: i * 2 })),
          data,
        ),
      )
      .expect(200);
    const reqId = uniqueName('train');
    const answer = await t.http
      .post('/api/sql/query')
      .set('X-Request-Id', reqId)
      .send({
        query: `CREATE MODEL ${project}.doubled FROM files (SELECT * FROM ${data}) PREDICT y USING join_learn_process = true`,
      })
      .expect(200);
    expect(answer.body.type).toBe('table');

    const lines = sink.of(reqId).filter((l) => String(l.msg).startsWith('training'));
    const model = `${project}.doubled`;
    expect(lines[0]).toMatchObject({ msg: 'training started', model, version: 1 });
    expect(lines[1]).toMatchObject({ msg: 'training rows read', model, rows: 60 });
    const phases = lines.filter((l) => l.msg === 'training phase').map((l) => l.phase);
    expect(phases).toEqual(expect.arrayContaining(['training']));
    expect(new Set(phases).size).toBe(phases.length);
    expect(lines.at(-1)).toMatchObject({
      msg: 'training completed',
      model,
      version: 1,
      rows: expect.any(Number),
      ms: expect.any(Number),
    });
  });
});

describe('upload progress', () => {
  it('given bytes arriving, then a progress line each time another interval has come, with the share of the declared size', () => {
    const sink = logSink();
    const log = withRequest({ requestId: 'big-upload', interface: 'rest' }, () =>
      uploadLog(
        pino({ level: 'info' }, sink.stream),
        { file: 'big', source: 'multipart', declaredBytes: 1000 },
        300,
      ),
    );
    for (let i = 0; i < 10; i++) log.received(100);
    const progress = sink.lines().filter((l) => l.msg === 'upload progress');
    expect(progress.map((l) => [l.bytes, l.percent])).toEqual([
      [300, 30],
      [600, 60],
      [900, 90],
    ]);
    expect(progress.every((l) => l.reqId === 'big-upload' && l.file === 'big')).toBe(true);
  });

  it('given one chunk spanning several intervals, then one line', () => {
    const sink = logSink();
    const log = uploadLog(
      pino({ level: 'info' }, sink.stream),
      { file: 'f', source: 'url', declaredBytes: null },
      100,
    );
    log.received(350);
    log.received(10);
    const progress = sink.lines().filter((l) => l.msg === 'upload progress');
    expect(progress).toHaveLength(1);
    expect(progress[0]).toMatchObject({ bytes: 350 });
    expect(progress[0]).not.toHaveProperty('percent');
  });
});
