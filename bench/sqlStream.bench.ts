import fs from 'node:fs';
import http from 'node:http';
import { DuckDBInstance } from '@duckdb/node-api';
import { fmt, inTurns, loadAverage, startServer, stopServer, tmpDir } from './support';

/** CPU seconds (user + system) process `pid` has spent so far, from /proc (Linux; 0 when it cannot be read). */
const cpuSeconds = (pid: number) => {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
};

/**
 * POSTs `query` with response_format jsonlines and reads the answer as a client does: each line
 * parsed as it arrives, rows counted (never kept). Resolves with the rows counted.
 */
const streamRows = (port: number, query: string) =>
  new Promise<number>((resolve, reject) => {
    const req = http.request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: '/api/sql/query',
        headers: { 'Content-Type': 'application/json' },
      },
      (res) => {
        let pending = '';
        let header: unknown = null;
        let rows = 0;
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          pending += text;
          let at: number;
          while ((at = pending.indexOf('\n')) >= 0) {
            const line = JSON.parse(pending.slice(0, at)) as unknown[];
            pending = pending.slice(at + 1);
            if (header === null) header = line;
            else rows += line.length;
          }
        });
        res.on('end', () =>
          pending === '' ? resolve(rows) : reject(new Error(`a partial line: ${pending.slice(0, 100)}`)),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ query, response_format: 'jsonlines' }));
  });

/**
 * A streamed answer (`response_format: 'jsonlines'`) of `SELECT * FROM range(N)` through the SQL
 * endpoint, read and parsed by a client, against DuckDB in process reading the same rows into
 * JavaScript values (chunk by chunk, as the endpoint reads them), in turns. Beside the rates, the
 * service's own CPU time per million rows: on a shared machine wall time includes waiting for a core.
 */
export const benchSqlStream = async (rows: number) => {
  const query = `SELECT * FROM range(${rows})`;
  const dataDir = tmpDir('mindledger-bench-sqlstream-');
  const port = 47414;
  const server = await startServer('app-server.ts', {
    PORT: String(port),
    DATA_DIR: dataDir,
    BENCH_LOG_LEVEL: 'warn',
    SQL_ROW_LIMIT: String(rows * 2),
    SQL_MAX_ANSWER_BYTES: String(2 ** 40),
    SQL_TIMEOUT_MS: '600000',
  });
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const serverCpu: number[] = [];
  try {
    const inProcess = async () => {
      const started = performance.now();
      const result = await connection.stream(query);
      let read = 0;
      for (
        let chunk = await result.fetchChunk();
        chunk && chunk.rowCount > 0;
        chunk = await result.fetchChunk()
      )
        read += chunk.getRows().length;
      if (read !== rows) throw new Error(`in-process DuckDB read ${read} rows of ${rows}`);
      return rows / ((performance.now() - started) / 1000);
    };
    const endpoint = async () => {
      const cpu = cpuSeconds(server.pid!);
      const started = performance.now();
      const read = await streamRows(port, query);
      const seconds = (performance.now() - started) / 1000;
      serverCpu.push(cpuSeconds(server.pid!) - cpu);
      if (read !== rows) throw new Error(`the endpoint streamed ${read} rows of ${rows}`);
      return rows / seconds;
    };
    // A first stream of each warms what a first answer grows once.
    await streamRows(port, 'SELECT * FROM range(100000)');
    const turns = await inTurns(inProcess, endpoint);
    const cpuPerMillion = (serverCpu.sort((a, b) => a - b)[1]! / rows) * 1e6;
    console.log(
      `streamed answer (jsonlines) of ${fmt(rows)} rows of range(): endpoint ${fmt(turns.ours)} rows/s` +
        ` (service CPU ${fmt(cpuPerMillion, 2)} s per million rows) vs in-process DuckDB ${fmt(turns.baseline)} rows/s` +
        ` → ${fmt(turns.ratio, 3)} (turns ${turns.turns}); load average ${loadAverage()}`,
    );
    return { ratio: turns.ratio, rowsPerSecond: turns.ours };
  } finally {
    connection.closeSync();
    instance.closeSync();
    await stopServer(server);
  }
};
