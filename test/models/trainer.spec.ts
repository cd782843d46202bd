/**
 * The trainer when the version it was launched for is gone before its training starts (dropped on
 * another node between CREATE MODEL and the start): nothing is trained, nothing is recorded, and the
 * process does not end on an unhandled rejection.
 */
import { PassThrough } from 'node:stream';
import { modelTrainer } from '../../src/models/training';
import { notFound } from '../../src/shared/errors';
import { openBlobStore } from '../../src/storage/blobs';
import { startTestApp, type TestApp } from '../support/app';

describe('a training whose version is gone before it starts', () => {
  let t: TestApp;
  const logged: string[] = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => logged.push(...chunk.toString().split('\n').filter(Boolean)));
    t = await startTestApp('sqlite', { LOG_LEVEL: 'warn' }, { logStream });
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await t?.dispose();
  });

  const givenTrainerWhereTheModelIsGone = async () => {
    const commands: string[] = [];
    const trainer = modelTrainer(t.running.ctx, {
      run: async (_project, command) => {
        commands.push(command.type);
        if (command.type === 'StartTraining') throw notFound('Model with name m1 not found');
      },
      reportProgress: async () => undefined,
      loadVersion: async () => undefined,
      blobs: await openBlobStore(t.config.dataDir),
      rows: { table: async () => ({ names: [], rows: [] }) },
      instanceId: 'this-process',
    });
    return { trainer, commands };
  };

  it('launched without waiting: logs that the training did not start, records nothing else, rejects nothing', async () => {
    const { trainer, commands } = await givenTrainerWhereTheModelIsGone();
    await trainer.launch('p', 'm1', 1, false);
    await trainer.idle();
    await new Promise((r) => setTimeout(r, 50));
    expect(unhandled).toEqual([]);
    expect(commands).toEqual(['StartTraining']);
    const line = logged
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'training not started');
    expect(line).toMatchObject({ model: 'p.m1', version: 1, error: 'Model with name m1 not found' });
  });

  it('launched waiting: the caller hears why', async () => {
    const { trainer, commands } = await givenTrainerWhereTheModelIsGone();
    await expect(trainer.launch('p', 'm1', 1, true)).rejects.toThrow('Model with name m1 not found');
    expect(commands).toEqual(['StartTraining']);
    expect(unhandled).toEqual([]);
  });
});
