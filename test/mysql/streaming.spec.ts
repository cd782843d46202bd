import mysqlCallbacks from 'mysql2';
import type mysql from 'mysql2/promise';
import type { SqlEngine, StreamAnswer } from '../../src/mysql';
import { aborted, eventually, startFront, type Front } from './support';

/**
 * The streaming variant of the engine port, as the SQL engine offers it: `SELECT … FROM
 * numbers(n, width)` streams n rows (a number and a text of `width` bytes) from a generator that records how far it got;
 * every other statement is the real engine's answer, handed over as one chunk. This checks the
 * server's side of the contract (backpressure, limits, errors, departures) with a generator it can
 * watch; engine-streaming.spec.ts checks the real engine's streams.
 */
const numbersEngine = (base: SqlEngine) => {
  const state = {
    produced: 0,
    /** Rows the test's client has read so far (it updates this). */
    consumed: 0,
    /** The most rows produced and not yet read at any moment. */
    maxAhead: 0,
    finished: false,
    signal: undefined as AbortSignal | undefined,
    /** Throw this once this many rows are produced. */
    failAt: undefined as number | undefined,
    /** What truncated() says once the rows are done. */
    cutByEngine: false,
  };
  const engine: SqlEngine = {
    execute: base.execute,
    stream: async (query, context, params, signal): Promise<StreamAnswer> => {
      const m = /FROM numbers\((\d+), (\d+)\)/.exec(query);
      if (!m) {
        const answer = await base.execute(query, context, params, signal);
        if (answer.type !== 'table') return answer;
        return {
          ...answer,
          rows: (async function* () {
            yield answer.data;
          })(),
          truncated: () => answer.truncated === true,
        };
      }
      const total = Number(m[1]);
      const pad = 'x'.repeat(Number(m[2]));
      state.produced = 0;
      state.consumed = 0;
      state.maxAhead = 0;
      state.finished = false;
      state.signal = signal;
      async function* rows() {
        try {
          for (let at = 0; at < total; at += 500) {
            if (state.failAt !== undefined && at >= state.failAt)
              throw Object.assign(new Error('The engine failed part way'), { error_code: 1296 });
            const chunk = [];
            for (let i = at; i < Math.min(total, at + 500); i++) chunk.push([i, pad]);
            state.produced += chunk.length;
            state.maxAhead = Math.max(state.maxAhead, state.produced - state.consumed);
            yield chunk;
          }
        } finally {
          state.finished = true;
        }
      }
      return {
        type: 'table',
        column_names: ['n', 'pad'],
        column_types: ['BIGINT', 'VARCHAR'],
        rows: rows(),
        truncated: () => state.cutByEngine,
        context,
      };
    },
  };
  return { engine, state };
};

describe('streamed results (the engine port’s streaming variant)', () => {
  let front: Front;
  let numbers: ReturnType<typeof numbersEngine>;
  let c: mysql.Connection;
  /** The same client's callback API, whose query streams rows as they arrive. */
  let streaming: mysqlCallbacks.Connection;
  const opened: mysqlCallbacks.Connection[] = [];
  const callbackConnection = () => {
    const conn = mysqlCallbacks.createConnection({
      host: '127.0.0.1',
      port: front.port,
      user: 'reader',
      multipleStatements: true,
    });
    conn.on('error', () => undefined);
    opened.push(conn);
    return conn;
  };

  beforeAll(async () => {
    front = await startFront({
      server: { maxRows: 150_000 },
      engine: (base) => {
        numbers = numbersEngine(base);
        return numbers.engine;
      },
    });
    streaming = callbackConnection();
    c = streaming.promise();
  });
  afterAll(async () => {
    for (const conn of opened) conn.destroy();
    await front.dispose();
  });

  /** Reads a query's rows one by one through mysql2's stream, counting them as the engine sees it. */
  const readAll = async (sql: string, onRow: (row: unknown[], i: number) => void = () => {}) => {
    const stream = streaming.query({ sql, rowsAsArray: true }).stream({ highWaterMark: 100 });
    let i = 0;
    for await (const row of stream as AsyncIterable<unknown[]>) {
      onRow(row, i++);
      numbers.state.consumed = i;
      // A slow reader: it yields to the event loop every 1,000 rows.
      if (i % 1000 === 0) await new Promise((r) => setImmediate(r));
    }
    return i;
  };

  it('given 100,000 rows of 1 KiB, when the client reads slowly, then the server reads the engine only as fast as the client', async () => {
    let last: unknown[] = [];
    const count = await readAll('SELECT * FROM numbers(100000, 1024)', (row) => (last = row));
    expect(count).toBe(100_000);
    expect(last[0]).toBe(99_999);
    expect(numbers.state.finished).toBe(true);
    // 100 MB produced; never more than a few socket buffers' worth ahead of the reader
    // (without backpressure the generator runs to its end before the client reads much).
    expect(numbers.state.maxAhead).toBeLessThan(30_000);
    // 100 MB through the protocol: about a second alone, far longer on a machine the suite saturates.
  }, 120_000);

  it('given more rows than the server allows, then it sends its limit, stops the engine and warns', async () => {
    const count = await readAll('SELECT * FROM numbers(1000000, 1)');
    expect(count).toBe(150_000);
    expect(numbers.state.finished).toBe(true);
    expect(numbers.state.produced).toBeLessThan(1_000_000);
    const [warnings] = await c.query<mysql.RowDataPacket[]>('SHOW WARNINGS');
    expect(warnings).toEqual([
      { Level: 'Warning', Code: 1105, Message: expect.stringContaining('cut after 150000 rows') },
    ]);
  }, 120_000);

  it('given a result the engine cut itself, then the client gets a warning', async () => {
    numbers.state.cutByEngine = true;
    try {
      await readAll('SELECT * FROM numbers(10, 1)');
      const [[count]] = await c.query<mysql.RowDataPacket[]>('SHOW COUNT(*) WARNINGS');
      expect(count).toEqual({ '@@session.warning_count': 1 });
    } finally {
      numbers.state.cutByEngine = false;
    }
  });

  it('given an engine failing part way, then the client gets its error in place of the next row, and the connection goes on', async () => {
    numbers.state.failAt = 2000;
    try {
      await expect(c.query('SELECT * FROM numbers(5000, 1)')).rejects.toMatchObject({
        errno: 1296,
        message: 'The engine failed part way',
      });
    } finally {
      numbers.state.failAt = undefined;
    }
    expect((await c.query<mysql.RowDataPacket[]>('SELECT 1 AS fine'))[0]).toEqual([{ fine: 1 }]);
  });

  it('given a client that leaves mid-result, then the engine’s signal is aborted and its rows stop', async () => {
    const leaving = callbackConnection();
    const stream = leaving.query({ sql: 'SELECT * FROM numbers(1000000, 1024)' }).stream();
    stream.on('error', () => undefined);
    await new Promise((resolve) => stream.once('data', resolve));
    leaving.destroy();
    expect(await aborted(numbers.state.signal!)).toBe('clientGone');
    await eventually(() => numbers.state.finished);
    expect(numbers.state.produced).toBeLessThan(1_000_000);
  });

  it('streams other statements through the same variant (one chunk), multi-statements included', async () => {
    const [results] = await c.query<mysql.RowDataPacket[][]>(
      'SELECT 1 AS a; SELECT * FROM numbers(3, 2); SHOW DATABASES',
    );
    expect(results[0]).toEqual([{ a: 1 }]);
    expect(results[1]).toEqual([0, 1, 2].map((n) => ({ n, pad: 'xx' })));
    expect(results[2]!.map((r) => r.Database)).toContain('files');
  });
});
