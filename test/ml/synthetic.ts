/**
 * Seeded synthetic datasets for the engine's specs and benchmark: numbers with known structure,
 * so quality can be checked against what the data was made to contain.
 */
import { seededRandom } from '../../src/engines/ml/random';
import type { ColumnarData } from '../../src/engines/ml/table';

/** Standard normal draws from a seeded uniform generator (Box–Muller). */
export const normal = (random: () => number) => () =>
  Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

const WEEKLY = [0, 6, 9, 4, -2, -11, -6];

export type SeriesRow = { store: string; day: string; sales: number };

/**
 * Daily sales of three stores of different sizes: a level, a trend of `trend` per day (relative),
 * a weekly pattern and noise, from 2022-01-01 for `days` days. `spikes` adds that many multiples
 * of the level to chosen (store, day index) rows.
 */
export const seasonalSales = (
  days: number,
  seed = 11,
  spikes: { store: string; day: number; times: number }[] = [],
): SeriesRow[] => {
  const noise = normal(seededRandom(seed));
  const stores = [
    { store: 'small', level: 100 },
    { store: 'medium', level: 400 },
    { store: 'large', level: 1500 },
  ];
  const rows: SeriesRow[] = [];
  for (let t = 0; t < days; t++)
    for (const { store, level } of stores) {
      const day = new Date(Date.UTC(2022, 0, 1 + t)).toISOString().slice(0, 10);
      let sales = level * (1 + 0.002 * t) + (level / 100) * WEEKLY[t % 7]! + (level / 100) * 1.5 * noise();
      for (const s of spikes) if (s.store === store && s.day === t) sales += s.times * level;
      rows.push({ store, day, sales: Math.round(sales * 100) / 100 });
    }
  return rows;
};

/**
 * Rows × columns of numbers with a non-linear target: a sine, an interaction, a categorical code
 * (every fourth column holds 8 codes), an absolute value and uniform noise. `informative` columns
 * after the first five carry nothing; the target's noise floor gives r2 ≈ 0.978 at best.
 */
export const wideRegression = (rows: number, columns: number, seed = 1): ColumnarData => {
  const random = seededRandom(seed);
  const names: string[] = [];
  const data: Float64Array[] = [];
  for (let f = 0; f < columns; f++) {
    names.push(`x${f}`);
    const c = new Float64Array(rows);
    for (let i = 0; i < rows; i++) c[i] = f % 4 === 3 ? Math.floor(random() * 8) : random() * 10 - 5;
    data.push(c);
  }
  const col = (f: number) => data[Math.min(f, columns - 1)]!;
  const y = new Float64Array(rows);
  for (let i = 0; i < rows; i++)
    y[i] =
      3 * Math.sin(col(0)[i]!) +
      0.3 * col(1)[i]! * col(2)[i]! +
      (col(3)[i]! === 2 ? 4 : 0) +
      Math.abs(col(4)[i]!) +
      random() * 2;
  names.push('y');
  data.push(y);
  return { columns: names, data };
};

/** y depends on `signal` (and a little on `weak`); `noise_a` and `noise_b` are unrelated. */
export const planted = (n: number, seed = 9) => {
  const random = seededRandom(seed);
  const gauss = normal(random);
  return Array.from({ length: n }, () => {
    const signal = random() * 10;
    const weak = random() < 0.5 ? 'up' : 'down';
    return {
      noise_a: Math.round(random() * 1000),
      signal: Math.round(signal * 100) / 100,
      weak,
      noise_b: random() < 0.3 ? 'red' : random() < 0.5 ? 'green' : 'blue',
      y: Math.round((3 * signal + (weak === 'up' ? 1 : 0) + 0.5 * gauss()) * 100) / 100,
    };
  });
};

/** The same rows with y turned into a class. */
export const plantedClasses = (n: number) =>
  planted(n).map((r) => ({ ...r, y: r.y > 16 ? 'high' : r.y > 12 ? 'mid' : 'low' }));
