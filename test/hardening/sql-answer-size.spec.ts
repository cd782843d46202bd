/**
 * `SELECT repeat('x', 6000) FROM range(100000)` was read whole (up to the row limit) and converted
 * whole before anything was checked: 600 MB of text, 6.8 GB of memory and a 500. Rows are now
 * read chunk by chunk and the answer stops at SQL_MAX_ANSWER_BYTES, saying it was cut.
 */
import { loadConfig } from '../../src/config';
import { querySql, startTestApp, type TestApp } from '../support/app';

const MiB = 1024 * 1024;

describe('the SQL answer size', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp('sqlite', { SQL_MAX_ANSWER_BYTES: String(MiB) });
  });
  afterAll(() => t.dispose());

  const bytesOf = (rows: unknown[][]) =>
    rows.reduce<number>((n, r) => n + Buffer.byteLength(JSON.stringify(r)) + 1, 0);

  it('given the reported query, when it runs, then the answer stops at the limit, says so, and memory stays flat', async () => {
    let peak = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const before = peak;
    try {
      const a = await querySql(t, "SELECT repeat('x', 6000) AS s FROM range(100000)");
      expect(a).toMatchObject({ type: 'table', column_names: ['s'], truncated: true });
      expect(bytesOf(a.data!)).toBeLessThanOrEqual(MiB);
      // As many whole rows as fit: each is 6,000 x's, quotes, brackets and a separator.
      expect(a.data).toHaveLength(Math.floor(MiB / 6005));
      expect(a.data!.every((r) => r[0] === 'x'.repeat(6000))).toBe(true);
    } finally {
      clearInterval(sampler);
    }
    // Reading the 600 MB result whole took gigabytes; a chunk at a time takes tens of megabytes.
    expect(peak - before).toBeLessThan(1024 * MiB);
  });

  it('given multi-byte text, when the answer is cut, then the limit counts UTF-8 bytes', async () => {
    const a = await querySql(t, "SELECT repeat('é', 3000) AS s FROM range(1000)");
    expect(a.truncated).toBe(true);
    expect(bytesOf(a.data!)).toBeLessThanOrEqual(MiB);
    expect(a.data).toHaveLength(Math.floor(MiB / (6000 + 5)));
  });

  it('given answers under both limits, when they run, then they are whole and say nothing', async () => {
    const a = await querySql(t, "SELECT repeat('x', 1000) AS s FROM range(500)");
    expect(a.data).toHaveLength(500);
    expect(a.truncated).toBeUndefined();
    const b = await querySql(t, 'SELECT range AS n FROM range(3)');
    expect(b).toMatchObject({ data: [[0], [1], [2]] });
    expect(b.truncated).toBeUndefined();
  });

  it('given the default configuration, then answers are capped at 64 MiB', () => {
    expect(loadConfig({}).sqlMaxAnswerBytes).toBe(64 * MiB);
  });
});
