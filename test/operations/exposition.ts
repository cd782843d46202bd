import type { TestApp } from '../support/app';

/** One sample of the Prometheus text format: `name{label="value",…} number`. */
export type Sample = { name: string; labels: Record<string, string>; value: number };

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of an exposition, comments skipped; throws on a line that is neither. */
export const parseExposition = (text: string): Sample[] =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const m = SAMPLE.exec(line);
      if (!m) throw new Error(`not a Prometheus sample: ${line}`);
      const labels = Object.fromEntries([...(m[2] ?? '').matchAll(LABEL)].map((l) => [l[1]!, l[2]!]));
      return { name: m[1]!, labels, value: Number(m[3]) };
    });

/** GET /api/metrics, parsed; `value(name, labels)` is the sample whose labels include these (0 if none). */
export const scrape = async (t: TestApp) => {
  const res = await t.http.get('/api/metrics').expect(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  const samples = parseExposition(res.text);
  const matching = (name: string, labels: Record<string, string> = {}) =>
    samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return {
    text: res.text,
    samples,
    /** The sum over the samples that match (a counter by some of its labels). */
    value: (name: string, labels: Record<string, string> = {}) =>
      matching(name, labels).reduce((sum, s) => sum + s.value, 0),
    has: (name: string) => samples.some((s) => s.name === name),
  };
};
export type Scrape = Awaited<ReturnType<typeof scrape>>;
