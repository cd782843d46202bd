/**
 * Issue 60 item 3, as a property over every tool (fast-check, a fresh seed each run, printed; bounded runs):
 * generated bad arguments (unknown names, names of another project's objects, wrong types, empty,
 * huge strings) come back as a tool error whose text names the problem, or as a JSON-RPC
 * invalid-params error the SDK surfaces with a message; never a crash, and never the client's
 * "-32602 Structured content does not match the tool's output schema" (which hides the reason).
 * Beside it, a kill check: SQL error answers whose text is withheld (a blank `error_message`, the
 * code alone) are caught at the count `npm test` runs.
 */
import fc from 'fast-check';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { querySql, startTestApp, type TestApp } from '../support/app';
import { listen, mcpClient, textOf, type Listening } from './support';
import { propertyRuns, propertySeed, expectCaught } from '../support/seed';
import { sqlAnswersRewritten, whileBugged } from '../support/killChecks';

const SEED = Number(process.env.MCP_ERRORS_SEED ?? propertySeed());
const RUNS = Number(process.env.MCP_ERRORS_RUNS ?? 60);

describe('every tool answers bad arguments readably (sqlite)', () => {
  let t: TestApp;
  let l: Listening;
  let client: Client;
  let tools: string[];

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    l = await listen(t);
    // Another project's objects: a view and a knowledge base named like what the tools look for.
    await querySql(t, 'CREATE PROJECT other_p');
    await querySql(t, 'CREATE VIEW other_p.v AS (SELECT 1 AS a)');
    client = await mcpClient(l.url);
    tools = (await client.listTools()).tools.map((x) => x.name);
  });
  afterAll(async () => {
    await client?.close();
    await l?.close();
    await t?.dispose();
  });

  /** The arguments a tool is called with: names of nothing, of another project's objects, wrong types, huge. */
  const name = fc.oneof(
    fc.constantFrom('nope', 'mindsdb.nope', 'other_p.v', 'other_p.nope', 'a.b.c', '`x', '', '.', 'mindsdb.'),
    fc.string({ maxLength: 40 }),
    fc.constant('x'.repeat(100_000)),
  );
  const wrong = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}));
  const value = fc.oneof({ weight: 3, arbitrary: name }, { weight: 1, arbitrary: wrong });
  const args = fc.record(
    {
      project: value,
      database: value,
      table: value,
      agent: value,
      model: value,
      knowledge_base: value,
      question: value,
      query: value,
      inputs: fc.oneof(fc.constant({ nope: 1 }), wrong),
      position: fc.oneof(fc.integer(), wrong),
      filters: fc.oneof(fc.constant([{ column: 'nope', op: 'IN', value: 1 }]), wrong),
    },
    { requiredKeys: [] },
  );

  /** One call: a tool error with readable text, or an invalid-params error with a message. */
  const answersReadably = async (tool: string, a: Record<string, unknown>) => {
    try {
      const result = await client.callTool({ name: tool, arguments: a });
      if (result.isError) {
        expect(textOf(result as never).trim().length).toBeGreaterThan(0);
        expect(textOf(result as never)).not.toMatch(/Structured content/);
      }
    } catch (error) {
      expect(error).toBeInstanceOf(McpError);
      const e = error as McpError;
      expect(e.message).not.toMatch(/Structured content does not match/);
      expect(e.code).toBe(-32602);
      expect(e.message.length).toBeGreaterThan(20);
    }
  };

  it('given generated bad arguments for every tool, then a readable tool error or an invalid-params error, never a schema mismatch', async () => {
    console.log(`MCP errors property: seed ${SEED}, ${RUNS} runs (MCP_ERRORS_SEED, MCP_ERRORS_RUNS)`);
    await fc.assert(fc.asyncProperty(fc.constantFrom(...tools), args, answersReadably), {
      seed: SEED,
      numRuns: propertyRuns(RUNS),
    });
    // The server is still there afterwards.
    const after = await client.callTool({ name: 'query', arguments: { query: 'SELECT 1 AS ok' } });
    expect(after.isError).toBe(false);
  }, 120_000);

  it('kill check: SQL error answers with their text withheld (a blank message) are caught', async () => {
    // The bug: the SQL engine keeps an error's text for its log and answers the code alone.
    await whileBugged(
      () =>
        sqlAnswersRewritten(t, (answer) =>
          answer.type === 'error' ? { ...answer, error_message: '' } : answer,
        ),
      () =>
        expectCaught(fc.asyncProperty(fc.constantFrom(...tools), args, answersReadably), {
          seed: SEED,
          numRuns: propertyRuns(RUNS),
        }),
    );
  }, 120_000);
});
