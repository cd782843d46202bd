import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { seasonalSales, type SeriesRow } from '../ml/synthetic';
import type { TestApp } from './app';
import { sharedData } from './data';
import { givenFile, givenTrainedModel, uniqueName } from './world';

/** Rows as a CSV file in a temporary directory (removed with the process's other temp files). */
export const csvFile = (rows: readonly Record<string, unknown>[], name: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-models-'));
  const columns = Object.keys(rows[0]!);
  const cell = (v: unknown) =>
    typeof v === 'string' && /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : String(v);
  const text = [columns.join(','), ...rows.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\n');
  const file = path.join(dir, `${name}.csv`);
  fs.writeFileSync(file, `${text}\n`);
  return file;
};

/** Daily sales of three stores (`small`, `medium`, `large`) from 2022-01-01: trend, weekly cycle, noise. */
export const givenSalesFile = async (
  t: TestApp,
  days: number,
  spikes: Parameters<typeof seasonalSales>[2] = [],
) => {
  const rows: SeriesRow[] = seasonalSales(days, 11, spikes);
  const name = uniqueName('sales');
  await givenFile(t, csvFile(rows, name), name);
  return { name, rows };
};

/** A dataset of `../shared/data`, uploaded as a file of its own. */
export const givenSharedFile = async (t: TestApp, dataset: string) =>
  (await givenFile(t, sharedData(dataset), uniqueName(dataset.replace(/\.csv$/, '')))).name;

/** Rental listings whose price follows their size and location: a model learns it in about a second. */
export const rentalRows = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    sqft: 300 + 31 * i,
    location: i % 3 === 0 ? 'great' : 'good',
    rental_price: 2 * (300 + 31 * i) + (i % 3 === 0 ? 700 : 0),
  }));

/** `<project>.rentals`, predicting `rental_price`, trained on `rows` uploaded as a file of their own. */
export const givenRentalsModel = async (
  t: TestApp,
  project: string,
  rows: readonly Record<string, unknown>[],
) => {
  const training = (await givenFile(t, csvFile(rows, uniqueName('training')))).name;
  await givenTrainedModel(t, {
    project,
    name: 'rentals',
    from: 'files',
    select: `SELECT * FROM ${training}`,
    predict: 'rental_price',
  });
  return `${project}.rentals`;
};
