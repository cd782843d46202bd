import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { querySql, startTestApp, storeKinds, type TestApp } from '../support/app';
import { connectSdk, type Sdk } from '../support/sdk';
import { eventsOf, uniqueName } from '../support/world';

const CODE = 'class CustomPredictor:\n    def train(self, df, target_col, args=None):\n        pass\n';
const CODE_V2 = `${CODE}\n    def predict(self, df):\n        return df\n`;
const MODULES = 'pandas\nscikit-learn\n';

/** The model code and its requirements as files on disk, as an SDK user passes them. */
const givenByomFiles = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-byom-'));
  const code = path.join(dir, 'model.py');
  const modules = path.join(dir, 'requirements.txt');
  fs.writeFileSync(code, CODE);
  fs.writeFileSync(modules, MODULES);
  return { code, modules };
};

// The official mindsdb-js-sdk, unchanged, against the service: MLEngines (BYOM upload, SHOW, DROP).
describe.each(storeKinds)('mindsdb-js-sdk MLEngines on %s', (store) => {
  let t: TestApp;
  let sdk: Sdk;
  let close: () => Promise<void>;
  beforeAll(async () => {
    t = await startTestApp(store);
    ({ sdk, close } = await connectSdk(t));
    // The SDK prints the upload's answer; a spec's output stays quiet.
    jest.spyOn(console, 'log').mockImplementation(() => undefined);
    jest.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await close();
    await t.dispose();
  });

  it('creates a BYOM engine from files and finds it by name and in the list', async () => {
    const name = uniqueName('byom');
    const { code, modules } = givenByomFiles();
    const engine = await sdk.MLEngines.createMLEngine(name, code, modules, 'inhouse');
    expect(engine).toMatchObject({
      name,
      handler: 'byom',
      connection_data: { code: 'model.py', modules: 'requirements.txt', type: 'inhouse' },
    });
    expect(await sdk.MLEngines.getMLEngine(name)).toMatchObject({ name, handler: 'byom' });
    const all = await sdk.MLEngines.getAllMLEngines();
    expect(all.map((e) => [e.name, e.handler])).toEqual(
      expect.arrayContaining([
        ['lightwood', 'lightwood'],
        [name, 'byom'],
      ]),
    );
    // The log keeps what was uploaded.
    const [created] = await eventsOf(t, `ml-engine-${name}`);
    expect(created).toMatchObject({
      type: 'MlEngineCreated',
      data: { name, handler: 'byom', byom: { code: CODE, modules: MODULES } },
    });
  });

  it('uploads a new version of the code (streams), then deletes the engine', async () => {
    const name = uniqueName('byom');
    const { code, modules } = givenByomFiles();
    await sdk.MLEngines.createMLEngine(name, code, modules, 'inhouse');
    const updated = await sdk.MLEngines.updateMLEngine(
      name,
      Readable.from([CODE_V2]),
      Readable.from([MODULES]),
      'venv',
    );
    expect(updated).toMatchObject({ name, handler: 'byom', connection_data: { type: 'venv' } });
    await updated!.delete();
    expect(await sdk.MLEngines.getMLEngine(name)).toBeUndefined();
    const events = await eventsOf(t, `ml-engine-${name}`);
    expect(events.map((e) => e.type)).toEqual(['MlEngineCreated', 'MlEngineUpdated', 'MlEngineDeleted']);
    expect(events[1]!.data).toMatchObject({
      version: 2,
      parameters: { code: 'model.py', modules: 'requirements.txt', type: 'venv' },
      byom: { code: CODE_V2, modules: MODULES },
    });
  });

  it('answers the new version’s number to a raw POST, as MindsDB', async () => {
    const name = uniqueName('byom');
    const upload = (method: 'put' | 'post') =>
      t.http[method](`/api/handlers/byom/${name}`)
        .attach('code', Buffer.from(CODE), 'model.py')
        .attach('modules', Buffer.from(MODULES), 'requirements.txt')
        .field('type', 'inhouse');
    await upload('put').expect(200);
    expect((await upload('post').expect(200)).body).toEqual({
      last_engine_version: 2,
      engine_versions: [1, 2],
    });
    expect((await upload('put').expect(409)).body.title).toBe('ML engine already exists');
  });

  it('refuses an upload without its requirements, and a new version of an unknown engine', async () => {
    const res = await t.http
      .put(`/api/handlers/byom/${uniqueName('byom')}`)
      .attach('code', Buffer.from(CODE), 'model.py')
      .expect(400);
    expect(res.body.detail).toMatch(/two files: code .* and modules/);
    const { code, modules } = givenByomFiles();
    await expect(sdk.MLEngines.updateMLEngine('no_such_engine', code, modules, 'inhouse')).rejects.toThrow();
  });

  it('finds an engine made in SQL, its secrets masked, and drops it through the SDK', async () => {
    const name = uniqueName('llm');
    const created = await querySql(
      t,
      `CREATE ML_ENGINE ${name} FROM openai USING openai_api_key = 'sk-secret'`,
    );
    expect(created.type).toBe('ok');
    expect(await sdk.MLEngines.getMLEngine(name)).toMatchObject({
      name,
      handler: 'openai',
      connection_data: { openai_api_key: '******' },
    });
    await sdk.MLEngines.deleteMLEngine(name);
    expect(await sdk.MLEngines.getMLEngine(name)).toBeUndefined();
    await expect(sdk.MLEngines.deleteMLEngine(name)).rejects.toThrow(/does not exist/);
  });

  it('refuses a BYOM engine in SQL, which has no code to upload', async () => {
    const answer = await querySql(t, `CREATE ML_ENGINE ${uniqueName('byom')} FROM byom`);
    expect(answer).toMatchObject({
      type: 'error',
      error_message: expect.stringMatching(/PUT \/api\/handlers\/byom/),
    });
  });
});
