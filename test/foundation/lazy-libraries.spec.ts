import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(__dirname, '../..');

/**
 * The SDKs only some processes use are loaded by their first use, not at start (ARCHITECTURE.md):
 * they were a third of what every process and every spec file loaded. Node's own module cache, in a
 * process of its own (jest keeps modules apart from it), says what was loaded when.
 */
describe('libraries loaded on first use', () => {
  it('given a started app, when it answers REST and SQL, then neither the MCP, A2A, OpenAI SDK nor mysql2 is loaded; when /mcp/ and /a2a/ are asked, then their SDKs are', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'test/support/loaded-libraries-main.ts'],
      { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'silent' } },
    );
    const seen = JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, string[]>;
    expect(seen).toEqual({
      atStart: [],
      afterSql: [],
      afterMcpAndA2a: ['@modelcontextprotocol/sdk', '@a2a-js/sdk'],
    });
  }, 60_000);
});
