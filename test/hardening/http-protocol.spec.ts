/**
 * Requests Node's HTTP parser refuses never reach express: Node answered them with a bare status
 * line and no body (431 for large headers, 400 for bad chunking). With `answerClientErrors` on the
 * server, each is a problem+json naming what is wrong, and nothing is appended to the log.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { answerClientErrors } from '../../src/http/clientErrors';
import { startTestApp, type TestApp } from '../support/app';
import { startService } from '../support/service';

/** Writes raw bytes, reads until the server closes (or 3 s pass), returns what came back. */
const exchange = (port: number, chunks: (string | Buffer)[]) =>
  new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => socket.destroy(), 3000);
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    for (const c of chunks) socket.write(c);
  });

type Parsed = { statusLine: string; headers: Record<string, string>; body: string };
/** The last response on the connection (a keep-alive exchange may hold two). */
const lastResponse = (raw: string): Parsed => {
  const starts = [...raw.matchAll(/HTTP\/1\.1 \d{3} /g)];
  const at = starts.length ? starts[starts.length - 1]!.index : 0;
  const [head = '', body = ''] = raw.slice(at).split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  return { statusLine, headers, body };
};

const expectProblem = (raw: string, status: number, detail: RegExp) => {
  const res = lastResponse(raw);
  expect(res.statusLine).toMatch(new RegExp(`^HTTP/1.1 ${status} `));
  expect(res.headers['content-type']).toBe('application/problem+json');
  expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body, 'latin1'));
  const body = JSON.parse(res.body) as { title: string; detail: string; status: number };
  expect(body).toEqual({ title: expect.any(String), detail: expect.stringMatching(detail), status });
  return body;
};

describe('protocol errors are problem+json', () => {
  let t: TestApp;
  let server: http.Server;
  let port = 0;
  let eventsBefore = 0;
  const logSize = async () => (await t.running.ctx.log.head()).events;

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    server = answerClientErrors(http.createServer(t.running.app), t.running.ctx.logger);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  beforeEach(async () => {
    eventsBefore = await logSize();
  });
  afterEach(async () => {
    expect(await logSize()).toBe(eventsBefore);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await t.dispose();
  });

  it('headers over 16 KiB: 431 naming the limit, the header not echoed', async () => {
    const raw = await exchange(port, [
      `GET /api/projects HTTP/1.1\r\nHost: x\r\nX-Big: ${'secretish'.repeat(3000)}\r\n\r\n`,
    ]);
    expectProblem(raw, 431, /headers exceed .*16 KiB/);
    expect(raw).not.toContain('secretish');
  });

  it('an invalid chunk size: 400 saying so, nothing written', async () => {
    const raw = await exchange(port, [
      'POST /api/projects HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      'zz\r\n{"name":"chunky"}\r\n0\r\n\r\n',
    ]);
    expectProblem(raw, 400, /invalid chunk size/);
    await new Promise((r) => setTimeout(r, 100));
    expect((await t.http.get('/api/projects/chunky')).status).toBe(404);
  });

  it('a malformed request line: 400', async () => {
    expectProblem(await exchange(port, ['GARBAGE\r\n\r\n']), 400, /request line|not valid HTTP/);
  });

  it('a header with a forbidden character: 400', async () => {
    expectProblem(
      await exchange(port, ['GET /api/projects HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n']),
      400,
      /not valid HTTP/,
    );
  });

  it('both Content-Length and Transfer-Encoding (request smuggling shape): 400', async () => {
    expectProblem(
      await exchange(port, [
        'POST /api/projects HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      ]),
      400,
      /Content-Length or Transfer-Encoding|not valid HTTP/,
    );
  });

  it('garbage after a complete answer on a keep-alive connection: the first answer stands, then a 400', async () => {
    const raw = await exchange(port, [
      'GET /api/util/ping HTTP/1.1\r\nHost: x\r\n\r\n',
      'NOT HTTP AT ALL\r\n\r\n',
    ]);
    expect(raw.startsWith('HTTP/1.1 200 OK')).toBe(true);
    expect(raw).toContain('{"status":"ok"}');
    expectProblem(raw, 400, /not valid HTTP|request line/);
  });

  it('installing twice adds one listener', () => {
    answerClientErrors(server);
    expect(server.listenerCount('clientError')).toBe(1);
  });
});

describe('the real service answers protocol errors as problem+json', () => {
  it('oversized headers: 431 problem+json from the process npm start runs', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-protocol-'));
    const service = await startService({ DATA_DIR: dataDir });
    try {
      const port = Number(new URL(service.base).port);
      expectProblem(
        await exchange(port, [
          `GET /api/projects HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        ]),
        431,
        /16 KiB/,
      );
      // Idle kept-alive connections stay 65 s, not Node's 5 s (src/http/idleConnections.ts): a
      // client reusing one is not cut as it sends, and a load balancer's 60 s idle ends first.
      const ready = await fetch(`${service.base}/api/health`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get('keep-alive')).toBe('timeout=65');
    } finally {
      service.child.kill('SIGKILL');
      await service.exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
