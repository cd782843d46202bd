import { serializeArtifact } from '../../src/engines/ml/artifact';
import { makePredictor } from '../../src/engines/ml/predict';
import type { TrainingProgress } from '../../src/engines/ml/progress';
import { trainInWorker } from '../../src/engines/ml/runTraining';
import { columnsFromRows } from '../../src/engines/ml/table';
import { trainModel } from '../../src/engines/ml/trainModel';
import { planted, plantedClasses, seasonalSales } from './synthetic';

const orderOf = (phases: TrainingProgress['phase'][]) =>
  phases.map((p) => ['reading', 'encoding', 'training', 'calibrating'].indexOf(p));

describe('training', () => {
  describe('progress', () => {
    it('is reported in coarse steps rising to 100 through the phases in order', () => {
      // Given a training that reports its progress
      const seen: TrainingProgress[] = [];
      trainModel(planted(3000), 'y', { onProgress: (p) => seen.push(p) });
      // Then there are few reports, each at least as far as the one before
      expect(seen.length).toBeGreaterThanOrEqual(6);
      expect(seen.length).toBeLessThanOrEqual(20);
      seen.forEach((p, i) => {
        expect(p.total).toBe(100);
        if (i > 0) expect(p.done).toBeGreaterThanOrEqual(seen[i - 1]!.done);
      });
      // And the phases come in order, from reading at 0 to calibrating at 100
      const order = orderOf(seen.map((p) => p.phase));
      expect(order).toEqual([...order].sort((a, b) => a - b));
      expect(new Set(seen.map((p) => p.phase))).toEqual(
        new Set(['reading', 'encoding', 'training', 'calibrating']),
      );
      expect(seen[0]).toEqual({ phase: 'reading', done: 0, total: 100 });
      expect(seen.at(-1)).toEqual({ phase: 'calibrating', done: 100, total: 100 });
    });

    it('crosses from the training worker to the caller', async () => {
      const seen: TrainingProgress[] = [];
      const json = await trainInWorker(plantedClasses(1500), 'y', 4, { onProgress: (p) => seen.push(p) });
      expect(JSON.parse(json)).toMatchObject({ schemaVersion: 2, task: 'classification' });
      expect(seen.at(-1)).toEqual({ phase: 'calibrating', done: 100, total: 100 });
      expect(seen.length).toBeLessThanOrEqual(20);
    });
  });

  describe('permutation importance', () => {
    it('ranks a planted informative column above noise, and the strong above the weak', () => {
      const artifact = trainModel(planted(3000), 'y', { seed: 2 });
      const score = Object.fromEntries(artifact.importance.map((i) => [i.column, i.importance]));
      expect(Object.keys(score)).toEqual(['noise_a', 'signal', 'weak', 'noise_b']);
      expect(score.signal).toBe(1);
      expect(score.weak!).toBeGreaterThan(score.noise_a!);
      expect(score.weak!).toBeGreaterThan(score.noise_b!);
      expect(score.noise_a!).toBeLessThan(0.02);
      expect(score.noise_b!).toBeLessThan(0.02);
    });
  });

  describe('determinism', () => {
    it.each([
      ['regression', () => planted(1500), 'y', {}],
      ['classification (three classes)', () => plantedClasses(1500), 'y', {}],
      [
        'time series',
        () => seasonalSales(120),
        'sales',
        { orderBy: 'day', groupBy: 'store', window: 7, horizon: 3 },
      ],
    ])('%s: the same data and seed give byte-identical artifacts', (_label, data, target, options) => {
      const train = (seed: number) => serializeArtifact(trainModel(data(), target, { seed, ...options }));
      const first = train(5);
      expect(train(5)).toBe(first);
      // And another seed gives another model
      expect(train(6)).not.toBe(first);
    });

    it('rows and the same data as typed columns give the same artifact', () => {
      const rows = planted(1500);
      const columns = columnsFromRows(rows);
      expect(columns.data[0]).toBeInstanceOf(Float64Array);
      expect(serializeArtifact(trainModel(columns, 'y', { seed: 5 }))).toBe(
        serializeArtifact(trainModel(rows, 'y', { seed: 5 })),
      );
    });

    it('the worker thread writes the bytes an in-process training writes, typed columns transferred', async () => {
      const rows = planted(1500);
      const columns = columnsFromRows(rows);
      const json = await trainInWorker(columns, 'y', { seed: 5 }, { transfer: true });
      expect(json).toBe(serializeArtifact(trainModel(rows, 'y', { seed: 5 })));
      // Transferred: the caller's typed columns moved to the worker
      expect(columns.data[0]!.length).toBe(0);
    });
  });

  it('a training error in the worker rejects with its message', async () => {
    await expect(trainInWorker(planted(50), 'missing_column', 1)).rejects.toThrow(
      "The target column missing_column is not among the query's columns: noise_a, signal, weak, noise_b, y",
    );
  });

  it('options a worker training cannot take reject with their message, and move no column', async () => {
    // Options are read before the worker starts (it loads no zod): nothing is transferred for them.
    const columns = columnsFromRows(planted(50));
    await expect(
      trainInWorker(columns, 'y', { seed: 1, target_type: 'sideways' }, { transfer: true }),
    ).rejects.toThrow(/^Invalid training option target_type/);
    expect(columns.data[0]!.length).toBe(50);
  });

  it('a model trained on typed columns answers rows of strings as it answers numbers', () => {
    const rows = planted(1500);
    const predictor = makePredictor(trainModel(columnsFromRows(rows), 'y', { seed: 5 }));
    const asStrings = rows
      .slice(0, 20)
      .map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, String(v)])));
    const answers = (input: Record<string, unknown>[]) =>
      predictor.predict(input).map((a) => [a.y, a.y_min, a.y_max, a.y_original, a.y_anomaly]);
    expect(answers(asStrings)).toEqual(answers(rows.slice(0, 20)));
  });
});
