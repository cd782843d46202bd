import fs from 'node:fs';
import path from 'node:path';
import { serializeArtifact } from '../../src/engines/ml/artifact';
import { readArtifact } from '../../src/engines/ml/readArtifact';
import { makePredictor } from '../../src/engines/ml/predict';
import type { Row } from '../../src/engines/ml/dataset';

/**
 * Schema-1 artifacts live in event logs forever. These fixtures were written by the engine as it
 * was before schema 2 (commit 4d51ac9), together with that engine's predictions for probe rows.
 * They are JSON kept byte for byte as written: the extensions are not .json so formatters leave them.
 */
const fixture = (name: string) => {
  const dir = path.join(__dirname, 'fixtures');
  const json = fs.readFileSync(path.join(dir, `${name}.artifact`), 'utf8');
  const expected = JSON.parse(fs.readFileSync(path.join(dir, `${name}.predictions`), 'utf8')) as {
    probe: Row[];
    withTruth: Row[];
    fixed: Row[];
  };
  return { json, expected };
};

const targets: Record<string, string> = {
  'v1-home-rentals-regression': 'rental_price',
  'v1-home-rentals-location': 'location',
  'v1-synthetic-linear': 'y',
};

describe('schema-1 artifacts written before schema 2', () => {
  it.each(Object.keys(targets))('%s still reads as schema 1 and predicts exactly as before', (name) => {
    // Given an artifact and the answers the old engine gave
    const { json, expected } = fixture(name);
    const artifact = readArtifact(json);
    expect(artifact.schemaVersion).toBe(1);
    // When today's engine predicts the same rows, with and without the truth and a fixed confidence
    const predictor = makePredictor(artifact);
    const target = targets[name]!;
    const withTruth = predictor.predict(expected.probe);
    const fixed = predictor.predict(
      expected.probe.map(({ [target]: _t, ...r }) => r),
      { fixed_confidence: 0.8 },
    );
    // Then every field of every answer is the same, explain strings included
    expect(withTruth).toEqual(expected.withTruth);
    expect(fixed).toEqual(expected.fixed);
    // And reading then writing the artifact changes no byte
    expect(serializeArtifact(artifact)).toBe(json);
  });

  it('covers every schema-1 mixer kind among the fixtures it checks', () => {
    const kinds = Object.keys(targets).map((name) => {
      const a = readArtifact(fixture(name).json);
      return `${a.task}:${a.schemaVersion === 1 ? a.mixer.kind : ''}`;
    });
    expect(kinds.sort()).toEqual(['classification:gbdt', 'regression:gbdt', 'regression:linear']);
  });

  it('refuses an artifact of a newer schema with a message rather than misreading it', () => {
    const json = fixture('v1-synthetic-linear').json.replace('"schemaVersion":1', '"schemaVersion":3');
    expect(() => readArtifact(json)).toThrow(/newer engine \(artifact schema 3\)/);
  });
});
