import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { seasonalSales, type SeriesRow } from '../ml/synthetic';
import type { TestApp } from './app';
import { sharedData } from './data';
import { givenFile, uniqueName } from './world';

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
