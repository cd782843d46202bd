import type { MlEngineCreated } from '../../events';
import { decideMlEngine, type ByomUpload, type MlEngineCommand } from '../../src/mlEngines/decider';
import { mlEngineAggregate } from '../../src/mlEngines/state';
import { deciderSpec } from '../support/decider';

const spec = deciderSpec<Parameters<typeof decideMlEngine>[1], MlEngineCommand>({
  ...mlEngineAggregate,
  decide: decideMlEngine,
});
const now = new Date('2026-01-01T00:00:00.000Z');
const at = now.toISOString();
const upload = (code: string, type = 'inhouse'): ByomUpload => ({
  type,
  code: { fileName: 'model.py', content: code },
  modules: { fileName: 'requirements.txt', content: 'pandas\n' },
});
const byomCreated: MlEngineCreated = {
  type: 'MlEngineCreated',
  data: {
    name: 'mine',
    handler: 'byom',
    parameters: { code: 'model.py', modules: 'requirements.txt', type: 'inhouse' },
    byom: { code: 'v1', modules: 'pandas\n' },
    createdAt: at,
  },
};

describe('ML engine decider: BYOM engines', () => {
  it('makes a BYOM engine from an upload: the files named in its parameters, their contents kept', () =>
    spec
      .given([])
      .when({
        type: 'CreateMlEngine',
        data: { name: 'mine', handler: 'BYOM', parameters: {}, ifNotExists: false, byom: upload('v1') },
        metadata: { now },
      })
      .then([byomCreated]));

  it('refuses a BYOM engine without code (CREATE ML_ENGINE … FROM byom)', () =>
    spec
      .given([])
      .when({
        type: 'CreateMlEngine',
        data: { name: 'mine', handler: 'byom', parameters: {}, ifNotExists: false },
        metadata: { now },
      })
      .thenThrows('Invalid', /PUT \/api\/handlers\/byom\/mine/));

  it('numbers each new upload of its code: 2, then 3', () => {
    spec
      .given([byomCreated])
      .when({
        type: 'UpdateByomEngine',
        data: { name: 'mine', byom: upload('v2', 'venv') },
        metadata: { now },
      })
      .then([
        {
          type: 'MlEngineUpdated',
          data: {
            engineId: 1,
            name: 'mine',
            parameters: { code: 'model.py', modules: 'requirements.txt', type: 'venv' },
            byom: { code: 'v2', modules: 'pandas\n' },
            version: 2,
            updatedAt: at,
          },
        },
      ]);
    spec
      .given([
        byomCreated,
        {
          type: 'MlEngineUpdated',
          data: {
            engineId: 1,
            name: 'mine',
            parameters: byomCreated.data.parameters,
            byom: { code: 'v2', modules: '' },
            version: 2,
            updatedAt: at,
          },
        },
      ])
      .when({ type: 'UpdateByomEngine', data: { name: 'mine', byom: upload('v3') }, metadata: { now } })
      .then([
        expect.objectContaining({ type: 'MlEngineUpdated', data: expect.objectContaining({ version: 3 }) }),
      ]);
  });

  it('refuses new code for an unknown engine (404) or one not made from byom (400)', () => {
    spec
      .given([])
      .when({ type: 'UpdateByomEngine', data: { name: 'mine', byom: upload('v2') }, metadata: { now } })
      .thenThrows('NotFound', /ML engine with name mine does not exist/);
    spec
      .given([
        {
          type: 'MlEngineCreated',
          data: { name: 'mine', handler: 'openai', parameters: { openai_api_key: 'sk' }, createdAt: at },
        },
      ])
      .when({ type: 'UpdateByomEngine', data: { name: 'mine', byom: upload('v2') }, metadata: { now } })
      .thenThrows('Invalid', /made from openai, not byom/);
  });
});
