/**
 * A read model knows which log it belongs to: the position and the id of the last event it applied.
 * An older copy of the log restored under it (the probe deleted positions 38–44 and kept
 * projections.duckdb) made the next writes take positions the read model claimed to include, skip
 * them as applied, and lose 7 of 10 acknowledged creates from every read. Now the read model is
 * rebuilt from the log it finds, and says why.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { startTestApp, type TestApp } from '../support/app';

const projectNames = async (t: TestApp) =>
  ((await t.http.get('/api/projects').expect(200)).body as { name: string }[]).map((p) => p.name).sort();

const createProjects = async (t: TestApp, names: string[]) => {
  for (const name of names) await t.http.post('/api/projects').send({ name }).expect(201);
};

type Status = { read_model: { position: string; rebuilt_because: string | null } };

describe('an older copy of the SQLite log restored under its read model', () => {
  it('given the log restored from a copy taken before the last writes, then the read model is rebuilt and every write after is read back', async () => {
    let t = await startTestApp('sqlite');
    try {
      await createProjects(t, ['before1', 'before2']);
      await t.stop();
      const file = path.join(t.config.dataDir, 'events.sqlite');
      const backup = `${file}.backup`;
      fs.copyFileSync(file, backup);
      t = await t.restart();
      await createProjects(t, ['lost1', 'lost2', 'lost3']);
      await t.stop();
      // The operator restores the backup; the read model (projections.duckdb) stays.
      for (const suffix of ['-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
      fs.copyFileSync(backup, file);
      t = await t.restart();
      const status = (await t.http.get('/api/status').expect(200)).body as Status;
      expect(status.read_model.rebuilt_because).toMatch(
        /includes the log up to event \d+, which the log does not hold/,
      );
      expect(await projectNames(t)).toEqual(['before1', 'before2', 'mindsdb']);
      await createProjects(t, ['after1', 'after2', 'after3']);
      expect(await projectNames(t)).toEqual(['after1', 'after2', 'after3', 'before1', 'before2', 'mindsdb']);
      const ready = (await t.http.get('/api/ready').expect(200)).body as {
        position: string;
        log_head: string;
      };
      expect(ready.position).toBe(ready.log_head);
    } finally {
      await t.dispose();
    }
  });

  it('given a restart on the same log, then nothing is rebuilt', async () => {
    let t = await startTestApp('sqlite');
    try {
      await createProjects(t, ['kept']);
      t = await t.restart();
      const status = (await t.http.get('/api/status').expect(200)).body as Status;
      expect(status.read_model.rebuilt_because).toBeNull();
      expect(await projectNames(t)).toEqual(['kept', 'mindsdb']);
    } finally {
      await t.dispose();
    }
  });
});

describe('a PostgreSQL log that lost its last events under a node', () => {
  const withLog = async (t: TestApp, work: (client: pg.Client) => Promise<void>) => {
    const client = new pg.Client({ connectionString: t.config.eventStoreUrl });
    await client.connect();
    try {
      await work(client);
    } finally {
      await client.end();
    }
  };
  // As a restore of an older backup leaves it: every event after the first project's gone.
  const truncateAfter = (t: TestApp, keptProject: string) =>
    withLog(t, async (client) => {
      const { rows } = await client.query<{ p: string }>(
        'SELECT max(global_position)::text AS p FROM emt_messages WHERE stream_id = $1',
        [`project-${keptProject}`],
      );
      const kept = rows[0]!.p;
      await client.query('DELETE FROM emt_messages WHERE global_position > $1::bigint', [kept]);
      await client.query(
        'DELETE FROM emt_streams s WHERE NOT EXISTS (SELECT 1 FROM emt_messages m WHERE m.stream_id = s.stream_id)',
      );
      await client.query(
        `UPDATE emt_streams s SET stream_position = (SELECT max(m.stream_position) FROM emt_messages m WHERE m.stream_id = s.stream_id)`,
      );
    });

  it('given the events gone while the node runs, then it is not ready until it has rebuilt, and writes after are read back', async () => {
    const t = await startTestApp('postgres');
    try {
      await createProjects(t, ['before1', 'lost1', 'lost2']);
      expect(await projectNames(t)).toEqual(['before1', 'lost1', 'lost2', 'mindsdb']);
      await truncateAfter(t, 'before1');
      const notReady = await t.http.get('/api/ready');
      expect(notReady.status).toBe(503);
      expect((notReady.body as { detail: string }).detail).toMatch(
        /which the log does not hold.*: rebuilding the read model/,
      );
      for (let i = 0; i < 100; i++) {
        if ((await t.http.get('/api/ready')).status === 200) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await t.http.get('/api/ready').expect(200);
      expect(await projectNames(t)).toEqual(['before1', 'mindsdb']);
      await createProjects(t, ['after1', 'after2']);
      expect(await projectNames(t)).toEqual(['after1', 'after2', 'before1', 'mindsdb']);
    } finally {
      await t.dispose();
    }
  });

  it('given the events gone while the node runs, then every read during the rebuild answers 503 naming it or the whole log, never a failure or half of it', async () => {
    const t = await startTestApp('postgres');
    try {
      // Enough events that the rebuild in place lasts past a request or two.
      const many = Array.from({ length: 400 }, (_, i) => `p${String(i).padStart(4, '0')}`);
      for (let i = 0; i < many.length; i += 40)
        await Promise.all(
          many.slice(i, i + 40).map((name) => t.http.post('/api/projects').send({ name }).expect(201)),
        );
      await createProjects(t, ['kept', 'lost1']);
      // Read back: the read model includes the events about to be lost (a create may answer ahead of it).
      expect(await projectNames(t)).toContain('lost1');
      await truncateAfter(t, 'kept');
      const whole = [...many, 'kept', 'mindsdb'].sort();
      // Readiness notices and starts the rebuild; the reads follow at once, and keep on until ready.
      expect((await t.http.get('/api/ready')).status).toBe(503);
      const answers: { status: number; body: unknown; retryAfter?: string }[] = [];
      for (let i = 0; i < 400; i++) {
        const [rest, sql] = await Promise.all([
          t.http.get('/api/projects'),
          t.http.post('/api/sql/query').send({ query: 'SELECT name FROM information_schema.databases' }),
        ]);
        answers.push({ status: rest.status, body: rest.body, retryAfter: rest.headers['retry-after'] });
        answers.push({ status: sql.status, body: sql.body });
        if ((await t.http.get('/api/ready')).status === 200) break;
      }
      const refused = answers.filter(
        (a) =>
          (a.status === 503 && (a.body as { title?: string }).title === 'Read model rebuilding') ||
          (a.body as { type?: string }).type === 'error',
      );
      // The first read came while the rebuild ran: refused, saying why and when to come back.
      expect(refused.length).toBeGreaterThan(0);
      const restRefusal = answers.find((a) => a.status === 503)!;
      expect(restRefusal.retryAfter).toBe('2');
      expect((restRefusal.body as { detail: string }).detail).toMatch(
        /The read model is being rebuilt from the log \(.*which the log does not hold.*\)/,
      );
      for (const a of refused.filter((r) => (r.body as { type?: string }).type === 'error'))
        expect((a.body as { error_message: string }).error_message).toMatch(/being rebuilt from the log/);
      // Every other answer is the whole log's: no 500, no project missing.
      for (const a of answers.filter((x) => !refused.includes(x))) {
        expect(a.status).toBe(200);
        const names = Array.isArray(a.body)
          ? (a.body as { name: string }[]).map((p) => p.name)
          : (a.body as { data: string[][] }).data.map(([n]) => n);
        expect(names.filter((n) => n !== 'information_schema' && n !== 'files').sort()).toEqual(whole);
      }
      expect(await projectNames(t)).toEqual(whole);
    } finally {
      await t.dispose();
    }
  });

  it('given the events gone while the node was down, then it rebuilds at start', async () => {
    let t = await startTestApp('postgres');
    try {
      await createProjects(t, ['before1', 'lost1']);
      // Read back: the read model includes them when the node stops.
      expect(await projectNames(t)).toEqual(['before1', 'lost1', 'mindsdb']);
      await t.stop();
      await truncateAfter(t, 'before1');
      t = await t.restart();
      const status = (await t.http.get('/api/status').expect(200)).body as Status;
      expect(status.read_model.rebuilt_because).toMatch(/which the log does not hold/);
      expect(await projectNames(t)).toEqual(['before1', 'mindsdb']);
    } finally {
      await t.dispose();
    }
  });
});
