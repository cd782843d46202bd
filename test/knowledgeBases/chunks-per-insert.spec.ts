import { CHUNKS_PER_EVENT, chunkRowId, requireChunksFitOneInsert } from '../../src/engines/search/layout';
import { isDomainError } from '../../src/shared/errors';

describe('how many chunks one insert may hold', () => {
  it('given an insert cut into one chunk more than an event can number, when it is checked before recording, then it is a 400 naming the count and the way out', () => {
    let refusal: unknown;
    try {
      requireChunksFitOneInsert(CHUNKS_PER_EVENT + 1);
    } catch (error) {
      refusal = error;
    }
    expect(isDomainError(refusal)).toBe(true);
    expect(refusal).toMatchObject({ kind: 'Invalid', title: 'Too many chunks' }); // a 400 (src/http/problem.ts)
    expect((refusal as Error).message).toContain(`cut into ${CHUNKS_PER_EVENT + 1} chunks`);
    expect((refusal as Error).message).toContain('chunk_size');
  });

  it('given an insert of exactly as many chunks as an event can number, then it is accepted and its last chunk has a row id below the next event’s first', () => {
    expect(() => requireChunksFitOneInsert(CHUNKS_PER_EVENT)).not.toThrow();
    expect(chunkRowId(7n, CHUNKS_PER_EVENT - 1)).toBeLessThan(chunkRowId(8n, 0));
  });
});
