/**
 * mapConcurrently (src/shared/concurrency.ts): what asks agents from a JOIN and EVALUATE AGENT's
 * cases at AGENT_SQL_CONCURRENCY at a time. Given items whose work ends in any order, the results
 * come in the items' order, never more than the limit run at once, and after a failure no item is
 * started.
 */
import { mapConcurrently } from '../../src/shared/concurrency';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mapConcurrently', () => {
  it('answers in the items’ order with at most `limit` at work', async () => {
    let running = 0;
    let most = 0;
    const delays = [30, 5, 20, 1, 15, 2, 9, 4];
    const results = await mapConcurrently(delays, 3, async (ms, i) => {
      running++;
      most = Math.max(most, running);
      await tick(ms);
      running--;
      return `${i}:${ms}`;
    });
    expect(results).toEqual(delays.map((ms, i) => `${i}:${ms}`));
    expect(most).toBe(3);
  });

  it('fails with the first failure and starts no item after it', async () => {
    const started: number[] = [];
    const run = mapConcurrently([0, 1, 2, 3, 4, 5], 2, async (i) => {
      started.push(i);
      await tick(i === 1 ? 1 : 20);
      if (i === 1) throw new Error('item 1 failed');
      return i;
    });
    await expect(run).rejects.toThrow('item 1 failed');
    await tick(50);
    expect(started).toEqual([0, 1]);
  });

  it('answers nothing for no items and runs one at a time at a limit below one', async () => {
    expect(await mapConcurrently([], 4, async () => 1)).toEqual([]);
    let running = 0;
    let most = 0;
    await mapConcurrently([1, 2, 3], 0, async () => {
      most = Math.max(most, ++running);
      await tick(2);
      running--;
    });
    expect(most).toBe(1);
  });
});
