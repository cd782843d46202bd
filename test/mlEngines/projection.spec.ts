import { projected } from '../support/projection';

const at = '2026-01-01T00:00:00.000Z';

describe('ml_engines table', () => {
  it('shows a BYOM engine’s files and type, never its code; a new upload changes them in place; a drop removes it', async () => {
    const created = {
      type: 'MlEngineCreated' as const,
      data: {
        name: 'mine',
        handler: 'byom',
        parameters: { code: 'model.py', modules: 'requirements.txt', type: 'inhouse' },
        byom: { code: 'class CustomPredictor: pass', modules: 'pandas' },
        createdAt: at,
      },
    };
    const updated = {
      type: 'MlEngineUpdated' as const,
      data: {
        engineId: 1,
        name: 'mine',
        parameters: { code: 'v2.py', modules: 'requirements.txt', type: 'venv', api_key: 'sk' },
        byom: { code: 'class CustomPredictor: pass  # v2', modules: 'pandas' },
        version: 2,
        updatedAt: at,
      },
    };
    const afterUpload = await projected([created, updated]);
    expect(afterUpload('ml_engines').map((r) => [r.ID, r.NAME, r.HANDLER, r.CONNECTION_DATA])).toEqual([
      [1n, 'mine', 'byom', { code: 'v2.py', modules: 'requirements.txt', type: 'venv', api_key: '******' }],
    ]);
    const afterDrop = await projected([
      created,
      updated,
      { type: 'MlEngineDeleted', data: { engineId: 1, name: 'mine', deletedAt: at } },
    ]);
    expect(afterDrop('ml_engines')).toEqual([]);
  });
});
