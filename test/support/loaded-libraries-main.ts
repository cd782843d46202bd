// Run as a process of its own (test/foundation/lazy-libraries.spec.ts): starts an app, then prints
// which of the libraries loaded on first use are in Node's module cache, before and after `touch`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import supertest from 'supertest';
import { createApp } from '../../src/app';
import { loadConfig } from '../../src/config';

const LIBRARIES = ['@modelcontextprotocol/sdk', '@a2a-js/sdk', 'openai', 'mysql2'];
const loaded = () =>
  LIBRARIES.filter((name) =>
    Object.keys(require.cache).some((file) => file.includes(`/node_modules/${name}/`)),
  );

const main = async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mindledger-lazy-'));
  const app = await createApp(loadConfig({ DATA_DIR: dataDir, JOBS_POLL_MS: '0', TRIGGERS_POLL_MS: '0' }), {
    logger: pino({ level: 'silent' }),
  });
  const atStart = loaded();
  const http = supertest(app.app);
  await http.get('/api/util/ping').expect(200);
  await http.post('/api/sql/query').send({ query: 'SELECT 1' }).expect(200);
  const afterSql = loaded();
  await http
    .post('/mcp/')
    .set('accept', 'application/json, text/event-stream')
    .send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'probe', version: '1' },
      },
    })
    .expect(200);
  await http.get('/a2a/mindsdb/nobody/.well-known/agent-card.json');
  const afterMcpAndA2a = loaded();
  await app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ atStart, afterSql, afterMcpAndA2a })}\n`);
};

void main();
