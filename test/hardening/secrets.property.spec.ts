/**
 * Secret masking missed key shapes (`aws_secret_access_key`, `api-key`, `Authorization`, a URL's
 * password, a secret key holding an array or an object). Property: for generated parameter keys
 * (secret words in every casing and separator style, and look-alikes that are not secrets) holding
 * unique markers, no secret marker appears in any GET answer, SQL answer or audit page for skills,
 * agents, chatbots and databases; every non-secret marker stays visible; the log keeps the secrets;
 * and a client writing back what it read keeps them too.
 * Beside it, a kill check: a skill's GET answering its params from the command's state (as a
 * write's answer does) with the mask left out is caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import { projectStream } from '../../src/shared/projectState';
import { projectAggregate } from '../../src/projects/aggregate';
import { skillById } from '../../src/skills/state';
import { databaseAggregate, databaseStream } from '../../src/databases/state';
import { keepMaskedSecrets, keyKind, keyWords, MASK, maskSecrets } from '../../src/shared/secrets';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { postgresParameters } from '../support/external';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';

const SEED = propertySeed();
/**
 * Runs (a skill, an agent, a chatbot and a database each). Halved from 12 (issue 62) once the kill
 * check below caught its bug at 6 on every one of seeds 1–20 (by run 2 at the latest); each run's
 * fresh seed draws new keys, and `npm run test:deep` (or SECRETS_RUNS) draws more.
 */
const RUNS = Number(process.env.SECRETS_RUNS ?? 6);

type Style = 'snake' | 'screaming' | 'kebab' | 'camel' | 'pascal';
const styles: Style[] = ['snake', 'screaming', 'kebab', 'camel', 'pascal'];
const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
const render = (words: readonly string[], style: Style) => {
  switch (style) {
    case 'snake':
      return words.join('_');
    case 'screaming':
      return words.join('_').toUpperCase();
    case 'kebab':
      return words.join('-');
    case 'camel':
      return words[0]! + words.slice(1).map(cap).join('');
    case 'pascal':
      return words.map(cap).join('');
  }
};

const secretNames = [
  ['password'],
  ['passwd'],
  ['pwd'],
  ['secret'],
  ['token'],
  ['api', 'key'],
  ['access', 'key'],
  ['private', 'key'],
  ['secret', 'access', 'key'],
  ['credentials'],
  ['credential'],
  ['authorization'],
  ['auth'],
  ['client', 'secret'],
  ['access', 'token'],
  ['refresh', 'token'],
  ['bearer', 'token'],
  ['passphrase'],
  // Provider keys, cookies, key files (issue: masking missed these shapes).
  ['openai', 'key'],
  ['azure', 'openai', 'key'],
  ['mistral', 'key'],
  ['anthropic', 'key'],
  ['storage', 'key'],
  ['cookie'],
  ['set', 'cookie'],
  ['keyfile', 'json'],
];
const prefixes = [[], ['db'], ['openai'], ['aws'], ['x'], ['slack', 'bot'], ['my', 'service']];
/** Written without separators: judged by the compound rule. */
const flatSecrets = ['apikey', 'dbpassword', 'accesstoken', 'clientsecret', 'sslpassword', 'PASSWORD'];
/** Keys that mention a secret word but do not hold one (decided and documented in secrets.ts). */
const lookAlikes = [
  ['max', 'tokens'],
  ['token', 'limit'],
  ['tokens', 'per', 'minute'],
  ['password', 'min', 'length'],
  ['auth', 'type'],
  ['token', 'type'],
  ['secret', 'name'],
  ['access', 'token', 'expires', 'at'],
  ['pass', 'through'],
  ['primary', 'key'],
  ['key', 'column'],
  ['sort', 'key'],
  ['partition', 'key'],
  ['foreign', 'key'],
  ['cache', 'key'],
  ['public', 'key'],
  ['cookie', 'name'],
];
const plainNames = [
  ['model', 'name'],
  ['temperature'],
  ['region'],
  ['author'],
  ['prompt', 'template'],
  ['key'],
  ['tokenizer'],
  ['mode'],
  ['description'],
];

const secretKey = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(fc.constantFrom(...prefixes), fc.constantFrom(...secretNames), fc.constantFrom(...styles))
      .map(([p, n, s]) => render([...p, ...n], s)),
  },
  { weight: 1, arbitrary: fc.constantFrom(...flatSecrets) },
);
const plainKey = fc
  .tuple(fc.constantFrom(...lookAlikes, ...plainNames), fc.constantFrom(...styles))
  .map(([n, s]) => render(n, s));

let counter = 0;
const marker = (kind: 'sEcReT' | 'pLaIn') =>
  `${kind}${(++counter).toString(36)}x${Math.random().toString(36).slice(2, 8)}`;

/** What one generated entry holds; markers are made when the run starts, so each is unique. */
type Shape =
  | { kind: 'secret'; key: string; holds: 'string' | 'array' | 'object' | 'number' }
  | { kind: 'plain'; key: string }
  | { kind: 'url'; key: string }
  | { kind: 'connection'; key: string; format: 'url' | 'semicolons' | 'blanks' };

const shape: fc.Arbitrary<Shape> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('secret' as const),
      key: secretKey,
      holds: fc.constantFrom('string' as const, 'array' as const, 'object' as const, 'number' as const),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('plain' as const), key: plainKey }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('url' as const),
      key: fc.constantFrom('host', 'url', 'endpoint', 'webhookUrl', 'api_base'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('connection' as const),
      key: fc.constantFrom('connection_string', 'connectionString', 'dsn', 'DATABASE_URL', 'conn_str'),
      format: fc.constantFrom('url' as const, 'semicolons' as const, 'blanks' as const),
    }),
  },
);

/** Keys a database's own schema reads (a generated one must not replace them). */
const CORE = new Set(['host', 'port', 'user', 'password', 'database', 'schema']);

const paramsArbitrary = fc.uniqueArray(shape, {
  minLength: 1,
  maxLength: 6,
  selector: (s) => s.key.toLowerCase(),
});

type Built = { params: Record<string, unknown>; secrets: string[]; visible: string[] };

const build = (shapes: readonly Shape[]): Built => {
  const params: Record<string, unknown> = {};
  const secrets: string[] = [];
  const visible: string[] = [];
  const secret = () => {
    const m = marker('sEcReT');
    secrets.push(m);
    return m;
  };
  const plain = () => {
    const m = marker('pLaIn');
    visible.push(m);
    return m;
  };
  for (const s of shapes) {
    switch (s.kind) {
      case 'secret':
        params[s.key] =
          s.holds === 'string'
            ? secret()
            : s.holds === 'array'
              ? [secret(), { nested: secret() }]
              : s.holds === 'object'
                ? { type: secret(), inner: { region: secret(), list: [secret()] } }
                : // A number has no marker text: its digits are the marker (unique, long).
                  (() => {
                    const n = 900_000_000_000 + ++counter;
                    secrets.push(String(n));
                    return n;
                  })();
        break;
      case 'plain':
        params[s.key] = plain();
        break;
      case 'url':
        params[s.key] = `https://${plain()}:${secret()}@example.com/v1?api_key=${secret()}&q=${plain()}`;
        break;
      case 'connection':
        params[s.key] =
          s.format === 'url'
            ? `postgres://${plain()}:${secret()}@db.example.com:5432/${plain()}`
            : s.format === 'semicolons'
              ? `Server=${plain()};User Id=${plain()};Password=${secret()};`
              : `host=${plain()} password=${secret()} dbname=${plain()}`;
        break;
    }
  }
  return { params, secrets, visible };
};

describe('secret masking (generated keys and values)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite');
    await t.http.post('/api/projects').send({ name: 'sec' }).expect(201);
  });
  afterAll(() => t.dispose());

  /** Every answer a client can read about these resources, as text. */
  const everythingReadable = async (names: {
    skill: string;
    agent: string;
    chatbot: string;
    database: string;
  }) => {
    const texts: string[] = [];
    const get = async (path: string) => {
      const res = await t.http.get(path).expect(200);
      texts.push(res.text);
      return res.text;
    };
    const own = {
      skill: await get(`/api/projects/sec/skills/${names.skill}`),
      agent: await get(`/api/projects/sec/agents/${names.agent}`),
      chatbot: await get(`/api/projects/sec/chatbots/${names.chatbot}`),
      database: await get(`/api/databases/${names.database}`),
    };
    for (const path of [
      '/api/projects/sec/skills',
      '/api/projects/sec/agents',
      '/api/projects/sec/chatbots',
      '/api/databases',
      '/api/events?limit=10000',
    ])
      await get(path);
    for (const query of [
      'SELECT * FROM information_schema.skills',
      'SELECT * FROM information_schema.agents',
      'SELECT * FROM information_schema.chatbots',
      'SELECT * FROM information_schema.databases',
      'SELECT * FROM information_schema.events',
      'SELECT * FROM sec.skills',
      'SELECT * FROM sec.agents',
      'SELECT * FROM sec.chatbots',
    ]) {
      const answer = await querySql(t, query);
      expect(answer.type).toBe('table');
      texts.push(JSON.stringify(answer));
    }
    return { all: texts.join('\n'), own };
  };

  /** Names made by every run of this file's checks (the property's and the kill check's alike). */
  let run = 0;

  /**
   * One run: a skill, an agent and a chatbot holding one generated set of parameters and a database
   * holding another are made, then every answer about them is read and held to the promise.
   */
  const masksEverywhere = async (forResources: readonly Shape[], forDatabase: readonly Shape[]) => {
    run++;
    const names = { skill: `sk_${run}`, agent: `ag_${run}`, chatbot: `cb_${run}`, database: `db_${run}` };
    const r = build(forResources);
    const d = build(forDatabase.filter((s) => !CORE.has(s.key.toLowerCase())));
    const dbParameters = { ...postgresParameters(), ...d.params };

    await t.http
      .post('/api/projects/sec/skills')
      .send({ skill: { name: names.skill, type: 'custom', params: r.params } })
      .expect(201);
    await t.http
      .post('/api/projects/sec/agents')
      .send({ agent: { name: names.agent, model_name: 'gpt-4o', provider: 'openai', params: r.params } })
      .expect(201);
    await t.http
      .post('/api/databases')
      .send({ database: { name: names.database, engine: 'postgres', parameters: dbParameters } })
      .expect(201);
    await t.http
      .post('/api/projects/sec/chatbots')
      .send({
        chatbot: {
          name: names.chatbot,
          agent_name: names.agent,
          database_name: names.database,
          params: r.params,
        },
      })
      .expect(201);

    const { all, own } = await everythingReadable(names);
    for (const s of [...r.secrets, ...d.secrets, postgresParameters().password]) expect(all).not.toContain(s);
    for (const v of r.visible) {
      expect(own.skill).toContain(v);
      expect(own.agent).toContain(v);
      expect(own.chatbot).toContain(v);
    }
    for (const v of d.visible) expect(own.database).toContain(v);

    // The stored log holds none of them (sealed before they enter it: crypto-shredding); its
    // streams, read back, give the real values: what a connection or a model call will use.
    const storedLog = JSON.stringify(
      (await t.running.ctx.log.readPage({ after: 0n, limit: 100_000 })).map((e) => e.data),
    );
    const streamOf = async (stream: string) =>
      (await t.running.ctx.log.readStream(stream, 0n)).events.map((e) => e.data);
    const readBack = JSON.stringify([
      ...(await streamOf(projectStream('sec'))),
      ...(await streamOf(databaseStream(names.database))),
    ]);
    for (const s of [...r.secrets, ...d.secrets]) {
      expect(storedLog).not.toContain(s);
      expect(readBack).toContain(s);
    }

    // A client writing back exactly what it read keeps every stored secret.
    const readDb = (await t.http.get(`/api/databases/${names.database}`).expect(200)).body as {
      connection_data: Record<string, unknown>;
    };
    await t.http
      .put(`/api/databases/${names.database}`)
      .send({ database: { parameters: readDb.connection_data } })
      .expect(200);
    const { state } = await t.running.ctx.commands.load(databaseStream(names.database), databaseAggregate);
    expect(state.status === 'live' && state.parameters).toEqual(dbParameters);

    const readSkill = (await t.http.get(`/api/projects/sec/skills/${names.skill}`).expect(200)).body as {
      params: Record<string, unknown>;
    };
    await t.http
      .put(`/api/projects/sec/skills/${names.skill}`)
      .send({ skill: { params: readSkill.params } })
      .expect(200);
    const stored = (await t.running.ctx.log.readStream(projectStream('sec'), 0n)).events
      .filter((e) => e.type === 'SkillUpdated' && (e.data as { name: string }).name === names.skill)
      .pop();
    expect((stored?.data as { params: unknown }).params).toEqual(r.params);
  };

  it('no secret marker in any answer; every plain marker visible; the log and write-backs keep them', async () => {
    await fc.assert(fc.asyncProperty(paramsArbitrary, paramsArbitrary, masksEverywhere), {
      seed: SEED,
      numRuns: propertyRuns(RUNS),
      endOnFailure: true,
    });
  }, 240_000);

  it("kill check: a skill's GET answering its params from the command's state, unmasked, is caught", async () => {
    // The bug: GET …/skills/:skill reads the skill's params from its project's state (unsealed, as
    // `presentSkillState` does for a write's answer) and leaves out `maskSecrets`.
    const skills = t.running.services.skills;
    const get = skills.get;
    const spy = jest.spyOn(skills, 'get').mockImplementation(async (project, ref) => {
      const shown = await get(project, ref);
      const { state } = await t.running.ctx.commands.load(projectStream(project), projectAggregate);
      return { ...shown, params: skillById(state.skills, BigInt(shown.id))!.params };
    });
    try {
      await expectCaught(fc.asyncProperty(paramsArbitrary, paramsArbitrary, masksEverywhere), {
        seed: SEED,
        numRuns: propertyRuns(RUNS),
      });
    } finally {
      spy.mockRestore();
    }
  }, 240_000);
});

describe('masking rules', () => {
  it.each([
    'aws_secret_access_key',
    'AWS_SECRET_ACCESS_KEY',
    'awsSecretAccessKey',
    'api-key',
    'X-Api-Key',
    'APIKey',
    'Authorization',
    'auth',
    'password',
    'DB_PASSWORD',
    'client_secret',
    'access_token',
    'private_key',
    'credentials',
    'db_pass',
    'sslpassword',
    'OPENAI_KEY',
    'AZURE_OPENAI_KEY',
    'MISTRAL_KEY',
    'anthropic_key',
    'storage_key',
    'cookie',
    'set-cookie',
    'Cookie',
    'keyfile_json',
  ])('%s is a secret', (key) => {
    expect(keyKind(key)).toBe('secret');
    expect(maskSecrets({ [key]: 'v' })).toEqual({ [key]: MASK });
  });

  it.each([
    'max_tokens',
    'token_limit',
    'tokens_per_minute',
    'password_min_length',
    'auth_type',
    'token_type',
    'secret_name',
    'author',
    'key',
    'primary_key',
    'pass_through',
    'tokenizer',
    'key_column',
    'sort_key',
    'partition_key',
    'foreign_key',
    'public_key',
  ])('%s is not a secret', (key) => {
    expect(keyKind(key)).toBe('plain');
    expect(maskSecrets({ [key]: 'v' })).toEqual({ [key]: 'v' });
  });

  it('masks a JSON string holding a secret inside it, a webhook path, signed URL parameters', () => {
    const keyFile = JSON.stringify({
      type: 'service_account',
      private_key: 'PEM-SECRET',
      client_email: 'a@b',
    });
    expect(maskSecrets({ service_account_json: keyFile, headers: { Cookie: 'sid=COOKIE' } })).toEqual({
      service_account_json: JSON.stringify({
        type: 'service_account',
        private_key: MASK,
        client_email: 'a@b',
      }),
      headers: { Cookie: MASK },
    });
    expect(
      maskSecrets({
        webhook_url: 'https://hooks.slack.com/services/T0/B0/SLACKSECRET',
        discord: 'https://discord.com/api/webhooks/123/DISCORDSECRET',
        blob: 'https://a.blob.core.windows.net/c/f?sv=2024&sig=SASSECRET&se=x',
        s3: 'https://b.s3.amazonaws.com/k?X-Amz-Signature=AMZSECRET&X-Amz-Date=20300101',
      }),
    ).toEqual({
      webhook_url: `https://hooks.slack.com/services/T0/B0/${MASK}`,
      discord: `https://discord.com/api/webhooks/123/${MASK}`,
      blob: `https://a.blob.core.windows.net/c/f?sv=2024&sig=${MASK}&se=x`,
      s3: `https://b.s3.amazonaws.com/k?X-Amz-Signature=${MASK}&X-Amz-Date=20300101`,
    });
  });

  it('masks generated secret key names however nested (objects, arrays, JSON strings, URLs); keeps the exclusions', () => {
    type Wrap = 'object' | 'array' | 'json';
    fc.assert(
      fc.property(
        secretKey,
        plainKey,
        fc.array(fc.constantFrom<Wrap>('object', 'array', 'json'), { maxLength: 4 }),
        (secretName, plainName, wraps) => {
          const secret = marker('sEcReT');
          const plain = marker('pLaIn');
          let value: unknown = { [secretName]: secret, [plainName]: plain };
          for (const w of wraps)
            value = w === 'object' ? { inner: value } : w === 'array' ? [value] : JSON.stringify(value);
          const shown = JSON.stringify(maskSecrets({ data: value }));
          expect(shown).not.toContain(secret);
          // JSON text inside JSON text is hidden whole (its inner secret is not a plain string).
          if (wraps.filter((w) => w === 'json').length <= 1) expect(shown).toContain(plain);
          // As URL query parameters (`key` alone is a signing parameter in a URL: not generated plain).
          const url = `https://example.com/x?${encodeURIComponent(secretName)}=${secret}&${encodeURIComponent(plainName)}=${plain}`;
          const inUrl = JSON.stringify(maskSecrets({ link: url }));
          expect(inUrl).not.toContain(secret);
          if (keyWords(plainName).join(' ') !== 'key') expect(inUrl).toContain(plain);
        },
      ),
      { seed: SEED, numRuns: propertyRuns(500) },
    );
  });

  it('masks everything under a secret key, keeps null as "not set"', () => {
    expect(
      maskSecrets({ credentials: { a: [1, 'x', null], b: { c: true } }, token: null, list: [{ pwd: 'x' }] }),
    ).toEqual({
      credentials: { a: [MASK, MASK, null], b: { c: MASK } },
      token: null,
      list: [{ pwd: MASK }],
    });
  });

  it('masks the password of a URL and secret query parameters, wherever the URL is', () => {
    expect(
      maskSecrets({
        host: 'postgres://u:pw@h:5432/db',
        notes: 'see mysql://root:p@ss/word@10.0.0.1/x for details',
        url: 'https://api.example.com/v1?api_key=abc&q=1&Password=zz',
        plain: 'https://example.com/a?b=c',
      }),
    ).toEqual({
      host: `postgres://u:${MASK}@h:5432/db`,
      notes: `see mysql://root:${MASK}@10.0.0.1/x for details`,
      url: `https://api.example.com/v1?api_key=${MASK}&q=1&Password=${MASK}`,
      plain: 'https://example.com/a?b=c',
    });
  });

  it('masks the secret parts of a connection string, or all of it when it has no parts', () => {
    expect(
      maskSecrets({
        connection_string: 'Server=h;User Id=u;Password=p w;',
        dsn: "host=h password='a b' user=u",
        connectionString: 'opaque-blob',
        DATABASE_URL: 'postgres://u:pw@h/db',
      }),
    ).toEqual({
      connection_string: `Server=h;User Id=u;Password=${MASK};`,
      dsn: `host=h password=${MASK} user=u`,
      connectionString: MASK,
      DATABASE_URL: `postgres://u:${MASK}@h/db`,
    });
  });

  it('a write-back of what was read keeps stored secrets; a changed value replaces them', () => {
    const stored = { password: 'real', url: 'postgres://u:real@h/db', credentials: { k: 'v', n: 1 }, x: 1 };
    const shown = maskSecrets(stored);
    expect(keepMaskedSecrets(shown, stored)).toEqual(stored);
    expect(keepMaskedSecrets({ ...shown, credentials: { k: MASK, n: 2 } }, stored)).toEqual({
      ...stored,
      credentials: { k: 'v', n: 2 },
    });
    expect(keepMaskedSecrets({ ...shown, password: 'new' }, stored)).toEqual({ ...stored, password: 'new' });
  });

  it('is iterative: a value 100,000 levels deep is masked without overflowing the stack', () => {
    let deep: unknown = { password: 'x' };
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    let masked = maskSecrets(deep) as unknown;
    let levels = 0;
    while (masked !== null && typeof masked === 'object') {
      masked = (masked as { a: unknown }).a;
      levels++;
    }
    // Past MAX_MASK_DEPTH the rest is shown as the mask as a whole: nothing below it can leak.
    expect(masked).toBe(MASK);
    expect(levels).toBeGreaterThan(10_000);
    let incoming: Record<string, unknown> = { password: MASK };
    let stored: Record<string, unknown> = { password: 'x' };
    for (let i = 0; i < 100_000; i++) {
      incoming = { a: incoming };
      stored = { a: stored };
    }
    expect(() => keepMaskedSecrets(incoming, stored)).not.toThrow();
  });
});
