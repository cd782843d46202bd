/**
 * `AS OF`: the resource tables as they stood at a log position (or a moment), answered from the
 * history the projections keep. The promise, checked on generated command sequences over every
 * capability: for every position of the log, each resource table AS OF that position equals the
 * same table in a read model replayed from the log and stopped at that position. Then the SQL
 * forms (POSITION, TIMESTAMP, project and information_schema tables, errors) by example.
 */
import fc from 'fast-check';
import pino from 'pino';
import { allProjections } from '../../projections';
import type { RecordedEvent } from '../../events';
import { openDuck, type Duck } from '../../src/duckdb/database';
import type { EventLog, LogCursor } from '../../src/eventlog/types';
import { ProjectionRunner } from '../../src/projection/runner';
import { HISTORY_TABLES } from '../../src/projection/history';
import { catalogTables, IS_SCHEMA } from '../../src/sql/catalog/catalog';
import { sliceCatalogs } from '../../src/wiring/sqlSlices';

const { asOfQuery, installCatalog } = catalogTables(sliceCatalogs);
import {
  keepingAlive,
  querySql,
  startTestApp,
  storeKinds,
  type StoreKind,
  type TestApp,
} from '../support/app';
import { expectCaught } from '../support/seed';
import { postgresParameters } from '../support/external';
import { uniqueName } from '../support/world';
import { applyAll, commandSequence, propertySettings, PROPERTY_TIMEOUT_MS } from '../support/promise-world';

const SETTINGS = propertySettings(6);
/** The resource tables AS OF reads (information_schema's names). */
const TABLES = [
  'DATABASES',
  'SKILLS',
  'AGENTS',
  'CHATBOTS',
  'MODELS',
  'KNOWLEDGE_BASES',
  'VIEWS',
  'JOBS',
  'ML_ENGINES',
];

/**
 * The log's events numbered up to `bound` (raised by the caller), served one per read in the order
 * of their numbers. On PostgreSQL the log is read in commit order, which is not the numbers' order
 * when appends commit concurrently (the jobs a tick fires each append at once): position p's state
 * is every event numbered p or less, and a replay stopped at the first event past p in commit order
 * would leave out a lower-numbered one committed after it.
 */
const boundedLog = (log: EventLog, inPositionOrder: readonly RecordedEvent[]) => {
  let bound = 0n;
  let next = 0;
  const bounded: EventLog = {
    ...log,
    readAll: async (after: LogCursor, _limit: number) => {
      const event = inPositionOrder[next];
      if (!event || event.meta.position > bound) return { events: [], cursor: after };
      next += 1;
      return { events: [event], cursor: { position: event.meta.position, transactionId: null } };
    },
  };
  return { log: bounded, raise: (to: bigint) => (bound = to) };
};

/** A read model replayed from the app's log into a scratch DuckDB, stopped where the caller says. */
const stoppedReplay = async (t: TestApp, inPositionOrder: readonly RecordedEvent[]) => {
  const duck: Duck = await openDuck({
    file: ':memory:',
    allowedDirectory: `${t.config.dataDir}/files`,
    readers: 2,
    // One thread, as the apps of the specs have (test/support/app.ts): its tables are tiny, and a
    // second thread only adds hand-offs to each of the replay's thousand or so small queries.
    threads: 1,
  });
  const { log, raise } = boundedLog(t.running.ctx.log, inPositionOrder);
  const runner = new ProjectionRunner(duck, log, allProjections, pino({ level: 'silent' }), { batchSize: 1 });
  await runner.start();
  await installCatalog(duck.writer);
  return {
    duck,
    /** The read model replayed up to and including `position`. */
    until: async (position: bigint) => {
      raise(position);
      await runner.catchUp();
    },
    close: async () => {
      await runner.stop();
      await duck.close();
    },
  };
};

const asJson = (rows: unknown) =>
  JSON.stringify(rows, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v));

/** How a table is read as of a position: the product's query, or a kill check's mutant of it. */
type AsOfText = (table: string, position: bigint) => string;
const productAsOf: AsOfText = (table, position) => asOfQuery('information_schema', table, position);

/** Each table in TABLES read by `read` (in that order), as JSON. */
const readTables = async (read: (table: string) => Promise<unknown>) => {
  const tables: string[] = [];
  for (const table of TABLES) tables.push(asJson(await read(table)));
  return tables;
};

/** The promise: for every position of a generated log, each table AS OF it equals the replay stopped there. */
const asOfEqualsReplay = (kind: StoreKind, asOfText: AsOfText) =>
  fc.asyncProperty(commandSequence({ maxLength: 16 }), async (commands) => {
    const t = keepingAlive(await startTestApp(kind));
    try {
      await applyAll([t], commands);
      await t.running.services.models.idle();
      // readPage reads in the order of the events' numbers.
      const events = await t.running.ctx.log.readPage({ after: 0n, limit: 100_000 });
      const positions = events.map((e) => e.meta.position);
      // Before the first event, every event, and past the head.
      const probed = [0n, ...positions, positions.at(-1)! + 5n];
      const replay = await stoppedReplay(t, events);
      try {
        for (const position of probed) {
          // Both sides at once (two DuckDB instances, each read in turn on its own); both settle
          // before anything closes.
          const [asOf, replayed] = await Promise.allSettled([
            readTables((table) => t.running.ctx.duck.query(asOfText(table, position))),
            replay
              .until(position)
              .then(() => readTables((table) => replay.duck.query(`SELECT * FROM ${IS_SCHEMA}."${table}"`))),
          ]);
          if (asOf.status === 'rejected') throw asOf.reason;
          if (replayed.status === 'rejected') throw replayed.reason;
          for (const [i, table] of TABLES.entries())
            if (asOf.value[i] !== replayed.value[i])
              throw new Error(
                `${table} AS OF POSITION ${position}:\n  as of:    ${asOf.value[i]}\n  replayed: ${replayed.value[i]}`,
              );
        }
      } finally {
        await replay.close();
      }
    } finally {
      await t.running.services.models.idle();
      await t.dispose();
    }
  });

describe.each(storeKinds)('AS OF equals a replay stopped at the same position (%s)', (kind) => {
  it(
    'given generated command sequences, then for every log position each resource table AS OF it equals the replayed table',
    async () => {
      await fc.assert(asOfEqualsReplay(kind, productAsOf), SETTINGS);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('the AS OF property: its kill check', () => {
  it(
    'catches a version read as still true at the position that replaced it (VALID_TO >= p for > p), at the count npm test runs',
    async () => {
      const endedVersionKept: AsOfText = (table, position) => {
        const text = productAsOf(table, position);
        const mutant = text.replace(`VALID_TO > ${position}`, `VALID_TO >= ${position}`);
        // The mutant must differ from the product's text, or this check would prove nothing.
        if (mutant === text) throw new Error(`no "VALID_TO > ${position}" in the AS OF query: ${text}`);
        return mutant;
      };
      await expectCaught(asOfEqualsReplay('sqlite', endedVersionKept), SETTINGS);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

/*
 * The examples below share one app per store and describe (an app's start is most of an example's
 * time), each building its own world in it: a project, skill, agent or database of its own name.
 */

describe.each(storeKinds)('AS OF in SQL (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.dispose());

  const positionOf = (res: { headers: Record<string, string> }) => BigInt(res.headers['x-log-position']!);
  const pause = () => new Promise((r) => setTimeout(r, 15));

  it('given a skill created, changed and deleted, then each AS OF POSITION and AS OF TIMESTAMP answers its state then, in the project table and in information_schema', async () => {
    const skill = uniqueName('lookup');
    const created = await t.http
      .post('/api/projects/mindsdb/skills')
      .send({ skill: { name: skill, type: 'custom', params: { tables: ['a'] } } })
      .expect(201);
    await pause();
    const changed = await t.http
      .put(`/api/projects/mindsdb/skills/${skill}`)
      .send({ skill: { params: { tables: ['a', 'b'] } } })
      .expect(200);
    await pause();
    const deleted = await t.http.delete(`/api/projects/mindsdb/skills/${skill}`).expect(204);
    const [p1, p2, p3] = [positionOf(created), positionOf(changed), positionOf(deleted)];

    const at = async (clause: string, table = 'mindsdb.skills') =>
      (
        await querySql(
          t,
          `SELECT name, params FROM ${table} FOR SYSTEM_TIME AS OF ${clause} WHERE name = '${skill}'`,
        )
      ).data;
    expect(await at(`POSITION ${p1}`)).toEqual([[skill, JSON.stringify({ tables: ['a'] })]]);
    expect(await at(`POSITION ${p2}`)).toEqual([[skill, JSON.stringify({ tables: ['a', 'b'] })]]);
    expect(await at(`POSITION ${p1 - 1n}`)).toEqual([]);
    expect(await at(`POSITION ${p3}`)).toEqual([]);
    expect(await at(`POSITION ${p2}`, 'information_schema.skills')).toEqual(await at(`POSITION ${p2}`));
    // SQL:2011's FOR SYSTEM_TIME may be left out.
    const short = await querySql(
      t,
      `SELECT name FROM mindsdb.skills AS OF POSITION ${p1} AS s WHERE s.name = '${skill}'`,
    );
    expect(short.data).toEqual([[skill]]);

    // A moment: the last event recorded at or before it.
    const events = await querySql(
      t,
      `SELECT GLOBAL_POSITION, strftime(RECORDED_AT, '%Y-%m-%d %H:%M:%S.%f') FROM information_schema.events WHERE GLOBAL_POSITION IN (${p1}, ${p2})`,
    );
    const recordedAt = new Map(events.data!.map((r) => [BigInt(r[0] as number), String(r[1])]));
    expect(await at(`TIMESTAMP '${recordedAt.get(p2)}'`)).toEqual(await at(`POSITION ${p2}`));
    expect(await at(`TIMESTAMP '${recordedAt.get(p1)}'`)).toEqual(await at(`POSITION ${p1}`));
    expect(await at(`TIMESTAMP '2000-01-01 00:00:00'`)).toEqual([]);
    // The live table: deleted.
    expect((await querySql(t, `SELECT name FROM mindsdb.skills WHERE name = '${skill}'`)).data).toEqual([]);
  });

  it('given a database renamed nowhere but changed, then information_schema.databases AS OF shows its engine then, and joins of AS OF tables work', async () => {
    const shop = uniqueName('shop');
    const p0 = positionOf(await t.http.post('/api/projects').send({ name: shop }).expect(201));
    const agent = await t.http
      .post(`/api/projects/${shop}/agents`)
      .send({ agent: { name: 'helper', model_name: 'gpt-4o', provider: 'openai' } })
      .expect(201);
    const p1 = positionOf(agent);
    await t.http.delete(`/api/projects/${shop}/agents/helper`).expect(204);
    const answer = await querySql(
      t,
      `SELECT d.NAME, a.NAME FROM information_schema.databases FOR SYSTEM_TIME AS OF POSITION ${p1} AS d
         JOIN ${shop}.agents FOR SYSTEM_TIME AS OF POSITION ${p1} AS a ON d.NAME = a.PROJECT`,
    );
    expect(answer.data).toEqual([[shop, 'helper']]);
    const before = await querySql(
      t,
      `SELECT NAME FROM information_schema.databases AS OF POSITION ${p0 - 1n} WHERE NAME = '${shop}'`,
    );
    expect(before.data).toEqual([]);
  });

  it('names what AS OF cannot read: files, external databases, event tables, a bad clause', async () => {
    const cases: [string, RegExp][] = [
      [
        'SELECT * FROM information_schema.events AS OF POSITION 1',
        /AS OF is not supported for information_schema\.events/,
      ],
      [
        'SELECT * FROM mindsdb.jobs_history AS OF POSITION 1',
        /AS OF is not supported for mindsdb\.jobs_history/,
      ],
      ['SELECT * FROM mindsdb.skills FOR SYSTEM_TIME AS OF NOW()', /FOR SYSTEM_TIME AS OF takes TIMESTAMP/],
      ["SELECT * FROM mindsdb.skills AS OF TIMESTAMP 'yesterday'", /is not a timestamp/],
      ['SELECT * FROM mindsdb.skills AS OF POSITION x', /AS OF POSITION takes a log position/],
      ['SELECT * FROM nowhere.skills AS OF POSITION 1', /Database nowhere does not exist/],
    ];
    for (const [query, message] of cases) {
      const answer = await querySql(t, query);
      expect(answer.type).toBe('error');
      expect(answer.error_message).toMatch(message);
    }
  });
});

describe.each(storeKinds)('GET …?as_of= (%s)', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(kind);
  });
  afterAll(() => t.dispose());

  const positionOf = (res: { headers: Record<string, string> }) => BigInt(res.headers['x-log-position']!);

  it('given a project, an agent and a database that changed and went, then each GET with ?as_of= answers as it was then, by position or by moment', async () => {
    const shop = uniqueName('shop');
    const pgdb = uniqueName('pgdb');
    const p0 = positionOf(await t.http.post('/api/projects').send({ name: shop }).expect(201));
    const p1 = positionOf(
      await t.http
        .post(`/api/projects/${shop}/agents`)
        .send({
          agent: {
            name: 'helper',
            model_name: 'gpt-4o',
            provider: 'openai',
            params: { prompt_template: 'v1' },
          },
        })
        .expect(201),
    );
    const p2 = positionOf(
      await t.http
        .put(`/api/projects/${shop}/agents/helper`)
        .send({ agent: { params: { prompt_template: 'v2' } } })
        .expect(200),
    );
    const p3 = positionOf(
      await t.http
        .post('/api/databases')
        .send({
          database: {
            name: pgdb,
            engine: 'postgres',
            parameters: postgresParameters({ password: 'secret-pw' }),
          },
        })
        .expect(201),
    );
    await t.http.delete(`/api/projects/${shop}/agents/helper`).expect(204);
    await t.http.delete(`/api/databases/${pgdb}`).expect(204);

    const agentAt = (asOf: string) => t.http.get(`/api/projects/${shop}/agents/helper?as_of=${asOf}`);
    const v1 = await agentAt(String(p1)).expect(200);
    expect(v1.body).toMatchObject({ name: 'helper', prompt_template: 'v1' });
    expect(v1.headers['x-as-of-position']).toBe(String(p1));
    expect((await agentAt(String(p2)).expect(200)).body).toMatchObject({ prompt_template: 'v2' });
    expect((await agentAt(String(p0)).expect(404)).headers['content-type']).toMatch(/problem\+json/);
    await t.http.get(`/api/projects/${shop}/agents/helper`).expect(404);
    // The list, as of then (not the live list from a cache).
    const listed = await t.http.get(`/api/projects/${shop}/agents?as_of=${p2}`).expect(200);
    expect((listed.body as { name: string }[]).map((a) => a.name)).toEqual(['helper']);
    expect((await t.http.get(`/api/projects/${shop}/agents`).expect(200)).body).toEqual([]);

    const db = await t.http.get(`/api/databases/${pgdb}?as_of=${p3}`).expect(200);
    expect(db.body).toMatchObject({ name: pgdb, engine: 'postgres' });
    expect(JSON.stringify(db.body)).not.toContain('secret-pw');
    await t.http.get(`/api/databases/${pgdb}?as_of=${p0}`).expect(404);

    // By moment: the last event recorded at or before it.
    const event = await t.running.ctx.log.eventAt(p2);
    const moment = new Date(event!.meta.recordedAt).toISOString();
    const byMoment = await agentAt(moment).expect(200);
    expect(BigInt(byMoment.headers['x-as-of-position']!)).toBeGreaterThanOrEqual(p2);
    expect(byMoment.body).toMatchObject({ prompt_template: 'v2' });
    await agentAt('2000-01-01T00:00:00Z').expect(404);
  });

  it('refuses as_of on a write, and a value that is neither a position nor a moment', async () => {
    const later = uniqueName('later');
    const write = await t.http.post('/api/projects?as_of=3').send({ name: later });
    expect(write.status).toBe(400);
    expect(write.body.detail).toMatch(/applies to GET requests, not POST/);
    await t.http.get(`/api/projects/${later}`).expect(404);
    const bad = await t.http.get('/api/projects?as_of=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/as_of must be a log position .* or an ISO-8601 moment/);
  });
});

describe('the tables AS OF reads', () => {
  it('are exactly those whose projections keep history', () => {
    const keeping = allProjections.filter((p) => p.history).map((p) => p.table);
    expect(new Set(keeping)).toEqual(new Set(HISTORY_TABLES));
  });
});
