import { deadlineIn } from '../../src/sql/deadline';

/**
 * A request's time-limit error names the external databases it was waiting on when it fired: on a
 * loaded machine the request's own timer can fire before the database's (shorter) limit does, and
 * the caller must still hear which database held the query.
 */
describe('a deadline that fires while the request waits on a database', () => {
  it('names what it waits on, and forgets it once the wait is over', async () => {
    let now = 0;
    const deadline = deadlineIn(1000, () => now);
    let release!: () => void;
    const first = deadline.waitingOn('pg_slow', new Promise<void>((resolve) => (release = resolve)));
    const second = deadline.waitingOn('maria_slow', Promise.resolve());
    await second;
    now = 1000;
    expect(deadline.expired()).toBe(true);
    expect(deadline.error().message).toBe(
      "The query ran longer than 1000 ms and was interrupted while waiting for 'pg_slow'",
    );
    release();
    await first;
    expect(deadline.error().message).toBe('The query ran longer than 1000 ms and was interrupted');
  });

  it('keeps a database named while any of its waits is open, and passes a failed wait on', async () => {
    const deadline = deadlineIn(1000, () => 0);
    let release!: () => void;
    const open = deadline.waitingOn('pg', new Promise<void>((resolve) => (release = resolve)));
    await expect(deadline.waitingOn('pg', Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(deadline.error().message).toContain("while waiting for 'pg'");
    release();
    await open;
    expect(deadline.error().message).toBe(
      "The query ran longer than 1000 ms and was interrupted after 'pg' failed to answer",
    );
  });

  it("given a database's own error on its way, when the request's timer fires first, then the time-limit error still names the database", async () => {
    // A CI run: the driver's 900 ms error lost the race to the 1,000 ms request timer by a turn of a
    // busy event loop (1,019 ms), and the caller heard the limit without the database's name.
    let now = 900;
    const deadline = deadlineIn(1000, () => now);
    await expect(
      deadline.waitingOn('pg_slow', Promise.reject(new Error('did not answer within 900 ms'))),
    ).rejects.toThrow('900 ms');
    now = 1019;
    expect(deadline.error().message).toBe(
      "The query ran longer than 1000 ms and was interrupted after 'pg_slow' failed to answer",
    );
    // Waiting on another meanwhile: both are named.
    let release!: () => void;
    const other = deadline.waitingOn('maria', new Promise<void>((resolve) => (release = resolve)));
    expect(deadline.error().message).toBe(
      "The query ran longer than 1000 ms and was interrupted while waiting for 'maria', after 'pg_slow' failed to answer",
    );
    release();
    await other;
  });
});
