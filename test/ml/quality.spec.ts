import { readSharedCsv } from '../support/data';
import { makePredictor } from '../../src/engines/ml/predict';
import { serializeArtifact } from '../../src/engines/ml/artifact';
import { shuffledIndices } from '../../src/engines/ml/random';
import { trainModel } from '../../src/engines/ml/trainModel';
import { balancedAccuracy, r2 } from '../../src/engines/ml/metrics';

const split = (rows: Record<string, string>[], seed = 7) => {
  const order = shuffledIndices(rows.length, seed);
  const cut = Math.floor(rows.length * 0.8);
  return { train: order.slice(0, cut).map((i) => rows[i]!), test: order.slice(cut).map((i) => rows[i]!) };
};

describe('the tabular engine on home_rentals', () => {
  let train: Record<string, string>[] = [];
  let test: Record<string, string>[] = [];
  beforeAll(async () => {
    ({ train, test } = split(await readSharedCsv('home_rentals.csv')));
  });

  // Held-out r2 of the schema-1 engine on this split: 0.99977 with initial_price, 0.99927 without;
  // this engine: 0.99995 and 0.99929. The bounds keep regression quality where it was.
  it.each([
    ['with initial_price', 0.9995, (r: Record<string, string>) => r],
    ['without initial_price', 0.999, ({ initial_price: _p, ...r }: Record<string, string>) => r],
  ])('predicts rental_price %s with r2 ≥ %s on held-out rows', (_label, bound, shape) => {
    const artifact = trainModel(train.map(shape), 'rental_price');
    const predictor = makePredictor(artifact);
    const out = predictor.predict(test.map(shape).map(({ rental_price: _t, ...r }) => r));
    const score = r2(
      test.map((r) => Number(r.rental_price)),
      out.map((o) => o.rental_price as number),
    );
    expect(score).toBeGreaterThanOrEqual(bound);
    expect(artifact).toMatchObject({
      task: 'regression',
      targetType: 'numeric',
      targetTypeSource: 'inferred',
    });
    expect(artifact.columns.find((c) => c.name === 'sqft')?.dtype).toBe('integer');
  });

  it('covers the truth with [min, max] about 90% of the time at fixed_confidence 0.9', () => {
    const shape = ({ initial_price: _p, ...r }: Record<string, string>) => r;
    const predictor = makePredictor(trainModel(train.map(shape), 'rental_price'));
    const out = predictor.predict(test.map(shape), { fixed_confidence: 0.9 });
    const covered = out.filter((o, i) => {
      const truth = Number(test[i]!.rental_price);
      return (o.rental_price_min as number) <= truth && truth <= (o.rental_price_max as number);
    }).length;
    const coverage = covered / out.length;
    expect(coverage).toBeGreaterThanOrEqual(0.86);
    expect(coverage).toBeLessThanOrEqual(0.94);
    // Given the truth, the anomaly flag says whether it fell outside the interval.
    expect(out.filter((o) => o.rental_price_anomaly === true).length).toBe(out.length - covered);
    expect(out[0]!.rental_price_confidence).toBe(0.9);
  });

  it('answers every field with the explain keys in MindsDB order', () => {
    const predictor = makePredictor(trainModel(train, 'rental_price'));
    const [row] = predictor.predict([{ sqft: '823', location: 'good', number_of_rooms: '1' }]);
    expect(Object.keys(row!)).toEqual([
      'number_of_rooms',
      'number_of_bathrooms',
      'sqft',
      'location',
      'days_on_market',
      'initial_price',
      'neighborhood',
      'rental_price',
      'rental_price_original',
      'rental_price_confidence',
      'rental_price_explain',
      'rental_price_anomaly',
      'rental_price_min',
      'rental_price_max',
      'select_data_query',
      'when_data',
      '__mindsdb_row_id',
    ]);
    expect(row).toMatchObject({
      sqft: '823',
      number_of_bathrooms: null,
      rental_price_original: null,
      rental_price_anomaly: null,
    });
    // rental_price has fractional values in the data (4123.812), so it is a float target.
    expect(typeof row!.rental_price).toBe('number');
    expect(row!.rental_price_min as number).toBeLessThanOrEqual(row!.rental_price as number);
    expect(row!.rental_price_max as number).toBeGreaterThanOrEqual(row!.rental_price as number);
    const explain = row!.rental_price_explain as string;
    // MindsDB's keys first, in its order (a row lacking inputs says which after them: issue 59).
    expect(Object.keys(JSON.parse(explain)).slice(0, 6)).toEqual([
      'predicted_value',
      'confidence',
      'anomaly',
      'truth',
      'confidence_lower_bound',
      'confidence_upper_bound',
    ]);
    expect(explain).toMatch(
      /^\{"predicted_value": [\d.]+, "confidence": [\d.]+, "anomaly": null, "truth": null, /,
    );
    expect(row!.rental_price_min as number).toBeGreaterThanOrEqual(0);
  });

  it('beats the majority baseline on balanced accuracy when predicting location', () => {
    const artifact = trainModel(train, 'location');
    if (artifact.task !== 'classification') throw new Error(`expected a classifier, got ${artifact.task}`);
    const predictor = makePredictor(artifact);
    const out = predictor.predict(test.map(({ location: _l, ...r }) => r));
    const classes = artifact.classes;
    const truth = test.map((r) => classes.indexOf(r.location!));
    const score = balancedAccuracy(
      truth,
      out.map((o) => classes.indexOf(o.location as string)),
    );
    const majority = balancedAccuracy(
      truth,
      truth.map(() => 0),
    );
    expect(score).toBeGreaterThan(majority + 0.1);
    const explain = JSON.parse(out[0]!.location_explain as string);
    expect(Object.keys(explain).slice(0, 4)).toEqual(['predicted_value', 'confidence', 'anomaly', 'truth']);
    expect(Object.keys(explain).filter((k) => k.startsWith('probability_class_'))).toHaveLength(
      classes.length,
    );
    expect(out[0]!.location_confidence).toBeGreaterThan(0);
  });

  it('is deterministic: the same data and seed give byte-identical artifacts', () => {
    const small = train.slice(0, 800);
    expect(serializeArtifact(trainModel(small, 'rental_price', { seed: 3 }))).toBe(
      serializeArtifact(trainModel(small, 'rental_price', { seed: 3 })),
    );
  });
});
