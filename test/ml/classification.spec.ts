import { makePredictor } from '../../src/engines/ml/predict';
import { balancedAccuracy } from '../../src/engines/ml/metrics';
import { shuffledIndices } from '../../src/engines/ml/random';
import { trainModel } from '../../src/engines/ml/trainModel';
import { readSharedCsv } from '../support/data';

/** Held-out evaluation: train on a seeded 80%, answer the other 20% without their class. */
const evaluate = async (file: string) => {
  const rows = await readSharedCsv(file);
  const order = shuffledIndices(rows.length, 7);
  const cut = Math.floor(rows.length * 0.8);
  const train = order.slice(0, cut).map((i) => rows[i]!);
  const test = order.slice(cut).map((i) => rows[i]!);
  const artifact = trainModel(train, 'Class');
  const answers = makePredictor(artifact).predict(test.map(({ Class: _c, ...r }) => r));
  const truth = test.map((r) => Number(r.Class));
  const probability2 = answers.map(
    (a) => (JSON.parse(a.Class_explain as string) as Record<string, number>).probability_class_2!,
  );
  /** Expected calibration error over ten probability bins. */
  const bins = Array.from({ length: 10 }, () => ({ n: 0, p: 0, y: 0 }));
  probability2.forEach((p, i) => {
    const bin = bins[Math.min(9, Math.floor(p * 10))]!;
    bin.n++;
    bin.p += p;
    bin.y += truth[i] === 2 ? 1 : 0;
  });
  return {
    artifact,
    balanced: balancedAccuracy(
      truth,
      answers.map((a) => a.Class as number),
    ),
    argmax: balancedAccuracy(
      truth,
      probability2.map((p) => (p > 0.5 ? 2 : 1)),
    ),
    majority: balancedAccuracy(
      truth,
      truth.map(() => 1),
    ),
    ece: bins.reduce((s, b) => s + Math.abs(b.p - b.y), 0) / truth.length,
    meanProbability: probability2.reduce((a, b) => a + b, 0) / truth.length,
    rate: truth.filter((t) => t === 2).length / truth.length,
  };
};

describe('classification of imbalanced classes', () => {
  /*
   * Bounds, measured with this engine on the seeded split (seed 7): bank 0.869 balanced accuracy
   * (the same model's argmax 0.74, an unweighted GBDT 0.735, the schema-1 engine's rounded
   * regression 0.721, the majority class 0.5); phoneme 0.866 (argmax 0.858). LightGBM-style GBDTs
   * with balanced weighting reach about 0.86–0.88 on bank. The bounds leave ~0.02 for seed noise.
   */
  it('openml_bank (88% one class): balanced accuracy ≥ 0.85, far above the majority class', async () => {
    const r = await evaluate('openml_bank.csv');
    expect(r.artifact).toMatchObject({
      task: 'classification',
      targetDtype: 'binary',
      training: { metric: 'balanced_accuracy' },
      decision: { rule: 'threshold' },
    });
    // Class weights balance the gradients: the rare class weighs about 4.5 times the common one.
    const [common, rare] = r.artifact.task === 'classification' ? r.artifact.training.classWeights! : [];
    expect(rare! / common!).toBeGreaterThan(4);
    expect(r.majority).toBe(0.5);
    expect(r.balanced).toBeGreaterThanOrEqual(0.85);
    // The balanced decision is what lifts it: the same probabilities' argmax favours the common class.
    expect(r.balanced).toBeGreaterThan(r.argmax + 0.08);
    // Probabilities are calibrated to the real frequencies, not to the weighted ones.
    expect(Math.abs(r.meanProbability - r.rate)).toBeLessThan(0.02);
    expect(r.ece).toBeLessThan(0.03);
    // Permutation importance finds what is known of this data: the call's duration (V12) matters most.
    const ranked = [...r.artifact.importance].sort((a, b) => b.importance - a.importance);
    expect(ranked[0]).toMatchObject({ column: 'V12', importance: 1 });
  });

  it('openml_phoneme (70/30): balanced accuracy ≥ 0.84 with calibrated probabilities', async () => {
    const r = await evaluate('openml_phoneme.csv');
    expect(r.balanced).toBeGreaterThanOrEqual(0.84);
    expect(r.balanced).toBeGreaterThanOrEqual(r.argmax);
    expect(Math.abs(r.meanProbability - r.rate)).toBeLessThan(0.03);
    expect(r.ece).toBeLessThan(0.04);
  });
});
