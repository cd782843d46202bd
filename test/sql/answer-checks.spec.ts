/**
 * An answer's reader looks at its run (deadline, client gone, memory) while it converts DuckDB's
 * values, not only between chunks: one chunk of 2,048 wide rows is many MiB of Node's heap, and
 * twelve such answers converted at once took a service with a 256 MiB heap from under its ceiling
 * to "JavaScript heap out of memory" between two samples of the memory watch
 * (test/faults/memory-pressure.spec.ts). The reader calls `check` every CHECK_EVERY_BYTES (4 MiB)
 * of rows converted, and a `check` that throws stops the conversion inside the chunk.
 */
import { resultRows } from '../../src/sql/pipeline/values';
import { inMemoryConnection } from '../support/memoryDuck';

/** One chunk of 2,048 rows of 8,000 characters: about 16 MiB once converted. */
const WIDE = "SELECT range AS n, repeat('v', 8000) AS s FROM range(2048)";
const MIB = 1024 * 1024;

describe('an answer read chunk by chunk', () => {
  const connection = inMemoryConnection();

  it('given a chunk of 16 MiB of rows, when it is converted, then check is called every 4 MiB within it, and the rows are whole', async () => {
    let checks = 0;
    const rows = resultRows(await connection().stream(WIDE), {
      rowLimit: 10_000,
      maxBytes: 64 * MIB,
      check: () => void checks++,
    });
    const first = await rows.next();
    expect(first).toHaveLength(2048);
    expect(first![2047]).toEqual([2047, 'v'.repeat(8000)]);
    // Before and after the fetch, and once per 4 MiB converted.
    expect(checks).toBe(2 + Math.floor(rows.bytes() / (4 * MIB)));
    expect(checks).toBeGreaterThanOrEqual(5);
    expect(await rows.next()).toBeUndefined();
  });

  it('given a check that throws once the chunk is partly converted, when the chunk is read, then the read fails with its error', async () => {
    let checks = 0;
    const stopped = new Error('the heap is past its ceiling');
    const rows = resultRows(await connection().stream(WIDE), {
      rowLimit: 10_000,
      maxBytes: 64 * MIB,
      check: () => {
        // The two around the fetch pass; the first inside the chunk throws.
        if (++checks === 3) throw stopped;
      },
    });
    await expect(rows.next()).rejects.toBe(stopped);
    expect(checks).toBe(3);
    expect(rows.bytes()).toBeLessThan(5 * MIB);
  });
});
