/**
 * Issue 57, defect 6: secrets of six shapes were stored in clear in the log and could not be
 * forgotten: keys `session_id`, `refresh` and `client_assertion`; `Password=`/`Pwd=` inside an
 * ADO.NET/ODBC connection string (under `connection_string`, or under any key); a PEM private key
 * under any key; GitHub tokens under any key. Secrets known by their shape (PEM blocks, token
 * prefixes: GitHub, OpenAI, Slack, AWS access key ids, JWTs) are now secrets under any key, by the
 * one rule every reader's mask and the log's sealing follow (src/shared/secrets.ts): masked in
 * every answer, sealed in the log, forgotten with their resource.
 */
import crypto from 'node:crypto';
import { databaseAggregate, databaseStream } from '../../src/databases/state';
import { FORGOTTEN } from '../../src/ledger/sealing';
import { MASK, maskSecrets } from '../../src/shared/secrets';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { postgresParameters } from '../support/external';
import { storedLog } from '../support/storedLog';
import { uniqueName } from '../support/world';

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
const alnum = (length: number) =>
  crypto
    .randomBytes(length * 2)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, length);

/**
 * One secret of every shape, each with a marker of its own (the markers are what must never show).
 * Token prefixes are written in two pieces so that no scanner takes this file for a leak.
 */
const secretsOfEveryShape = (lineBreak = '\n') => {
  const pemBody = crypto.randomBytes(48).toString('base64');
  const markers = {
    session: `sess${hex(8)}`,
    refresh: `rt${hex(8)}`,
    assertion: `${'eyJ'}hbGciOiJSUzI1NiJ9.${'eyJ'}pc3MiOi${hex(6)}.sig${hex(8)}`,
    adoPassword: `hunter${hex(6)}`,
    odbcPassword: `odbc${hex(6)}`,
    pem: pemBody,
    ghp: `${'gh'}p_${alnum(36)}`,
    githubPat: `${'github'}_pat_${alnum(22)}_${alnum(59)}`,
    openai: `${'sk'}-proj-${alnum(40)}`,
    slack: `${'xo'}xb-${hex(5)}-${hex(6)}-${alnum(24)}`,
    aws: `${'AK'}IA${alnum(16)
      .toUpperCase()
      .replace(/[^A-Z0-9]/g, 'Q')}`,
    jwt: `${'eyJ'}hbGciOiJIUzI1NiJ9.${'eyJ'}zdWIiOi${hex(8)}.${alnum(30)}`,
  };
  const parameters = {
    session_id: markers.session,
    refresh: markers.refresh,
    client_assertion: markers.assertion,
    connection_string: `Server=x;Database=y;User Id=u;Password=${markers.adoPassword};`,
    legacy_dsn_text: `Driver={ODBC Driver 18};Server=y;Uid=u;Pwd=${markers.odbcPassword};`,
    tls_material: `-----BEGIN EC PRIVATE KEY-----${lineBreak}${markers.pem}${lineBreak}-----END EC PRIVATE KEY-----${lineBreak}`,
    deploy_note: `deploy with ${markers.ghp} please`,
    ci: markers.githubPat,
    llm: markers.openai,
    chat: markers.slack,
    cloud: { id: markers.aws, region: 'eu-west-1' },
    header_value: `Bearer-less ${markers.jwt}`,
  };
  return { markers, parameters };
};

describe('secrets known by their key or their shape, masked wherever they are', () => {
  it('masks the six shapes of issue 57 and the well-known token prefixes, keeping what is not secret', () => {
    const { markers, parameters } = secretsOfEveryShape();
    const masked = maskSecrets(parameters);
    const text = JSON.stringify(masked);
    for (const [name, marker] of Object.entries(markers))
      expect([name, text.includes(marker)]).toEqual([name, false]);
    expect(masked).toMatchObject({
      session_id: MASK,
      refresh: MASK,
      client_assertion: MASK,
      // A connection string keeps everything but its password.
      connection_string: `Server=x;Database=y;User Id=u;Password=${MASK};`,
      legacy_dsn_text: `Driver={ODBC Driver 18};Server=y;Uid=u;Pwd=${MASK};`,
      tls_material: `${MASK}\n`,
      deploy_note: `deploy with ${MASK} please`,
      ci: MASK,
      llm: MASK,
      chat: MASK,
      cloud: { id: MASK, region: 'eu-west-1' },
      header_value: `Bearer-less ${MASK}`,
    });
  });

  it('leaves look-alikes that are no secret alone', () => {
    const plain = {
      auto_refresh: true,
      refresh_interval: 30,
      session_count: 4,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      model: 'sk-learn-classifier-model-v2',
      branch: 'ghp_short',
      note: 'Password is set in the vault',
      odbc: 'Server=x;Database=y;User Id=u;',
    };
    expect(maskSecrets(plain)).toEqual(plain);
  });
});

/** What every reader is shown of a database: itself, the list, the SQL catalogue, the audit trail. */
const everyAnswer = async (t: TestApp, name: string) => {
  const answers = [
    await t.http.get(`/api/databases/${name}`),
    await t.http.get('/api/databases'),
    await t.http.post('/api/sql/query').send({ query: 'SELECT * FROM information_schema.events' }),
    await t.http.post('/api/sql/query').send({ query: 'SHOW FULL DATABASES' }),
    await t.http.get('/api/events?limit=1000'),
  ];
  for (const a of answers) expect(a.status).toBeLessThan(300);
  return answers.map((r) => r.text).join('\n');
};

const streamParameters = async (t: TestApp, name: string) => {
  const { state } = await t.running.ctx.commands.load(databaseStream(name), databaseAggregate);
  return 'parameters' in state ? (state.parameters as Record<string, unknown>) : undefined;
};

describe.each(storeKinds)('secrets of every shape, stored through REST and SQL, on %s', (store) => {
  let t: TestApp;
  beforeEach(async () => {
    t = await startTestApp(store);
  });
  afterEach(() => t.dispose());

  const createByRest = async (name: string, parameters: Record<string, unknown>) => {
    await t.http
      .post('/api/databases')
      .send({ database: { name, engine: 'postgres', parameters: postgresParameters(parameters) } })
      .expect(201);
  };
  const createBySql = async (name: string, parameters: Record<string, unknown>) => {
    const res = await t.http.post('/api/sql/query').send({
      query: `CREATE DATABASE ${name} WITH ENGINE = 'postgres', PARAMETERS = ${JSON.stringify(postgresParameters(parameters))}`,
    });
    expect(res.body).toMatchObject({ type: 'ok' });
  };
  const forgetByRest = async (name: string) =>
    t.http.delete(`/api/databases/${name}?forget=true`).expect(204);
  const forgetBySql = async (name: string) => {
    const res = await t.http.post('/api/sql/query').send({ query: `DROP DATABASE ${name} FORGET` });
    expect(res.body).toMatchObject({ type: 'ok' });
  };

  // A SQL string keeps `\n` as written (no JSON escapes inside PARAMETERS): the PEM's lines are blank-separated there.
  it.each([
    ['REST', createByRest, forgetByRest, '\n'],
    ['SQL', createBySql, forgetBySql, ' '],
  ] as const)(
    'given a database holding them (%s), then every answer masks them, the log holds none in clear, the service reads them, and a forget leaves them unreadable',
    async (_door, create, forget, lineBreak) => {
      const { markers, parameters } = secretsOfEveryShape(lineBreak);
      const name = uniqueName('shapes');
      await create(name, parameters);

      const shown = await everyAnswer(t, name);
      for (const [shape, marker] of Object.entries(markers))
        expect([shape, shown.includes(marker)]).toEqual([shape, false]);
      expect(shown).toContain(`Password=${MASK};`);

      const stored = await storedLog(store, t);
      for (const [shape, marker] of Object.entries(markers))
        expect([shape, stored.includes(marker)]).toEqual([shape, false]);
      expect(stored).toContain('enc:v1:');

      // The code that needs a secret reads it from its stream, opened.
      expect(await streamParameters(t, name)).toMatchObject(parameters);

      await forget(name);
      const { events } = await t.running.ctx.log.readStream(databaseStream(name), 0n);
      const created = events.find((e) => 'parameters' in e.data)!.data as {
        parameters: Record<string, unknown>;
      };
      const replayed = JSON.stringify(created.parameters);
      for (const [shape, marker] of Object.entries(markers))
        expect([shape, replayed.includes(marker)]).toEqual([shape, false]);
      expect(created.parameters).toMatchObject({
        session_id: FORGOTTEN,
        refresh: FORGOTTEN,
        client_assertion: FORGOTTEN,
        connection_string: `Server=x;Database=y;User Id=u;Password=${FORGOTTEN};`,
        deploy_note: `deploy with ${FORGOTTEN} please`,
        ci: FORGOTTEN,
      });
      const after = await storedLog(store, t);
      for (const [shape, marker] of Object.entries(markers))
        expect([shape, after.includes(marker)]).toEqual([shape, false]);
    },
  );
});
