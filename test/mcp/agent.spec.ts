/**
 * ask_agent over MCP: a long run reports progress (MCP progress notifications) and a cancelled
 * request stops it (the run recorded as failed on its own stream, the call as cancelled); the
 * agent's provider key goes only to the provider it was stored for, never into the call's record,
 * its answer or another provider's requests.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestApp, storeKinds, type TestApp } from '../support/app';
import { fakeReply, startFakeOpenAi, type FakeOpenAi } from '../support/fakeOpenAi';
import { givenAgentOnProvider, givenNumbersSkill } from '../support/world';
import { listen, mcpClient, receiptOf, type Listening } from './support';

const until = async (check: () => Promise<boolean>, what: string, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

describe.each(storeKinds)('ask_agent over MCP (%s)', (store) => {
  let t: TestApp;
  let l: Listening;
  let client: Client;
  let provider: FakeOpenAi;
  let elsewhere: FakeOpenAi;
  const KEY = `sk-mcp-${store}-stored-key-0042`;

  /** A project with an agent on `fake`, holding `key` (none: no key stored). */
  const givenAgent = (fake: FakeOpenAi, key?: string) => givenAgentOnProvider(t, fake.baseUrl, 'mcpag', key);

  const runEvents = async (traceId: string) =>
    (await t.running.ctx.log.readStream(`agent-run-${traceId}`, 0n)).events;

  beforeAll(async () => {
    t = await startTestApp(store);
    l = await listen(t);
    client = await mcpClient(l.url);
    provider = await startFakeOpenAi();
    elsewhere = await startFakeOpenAi();
  });
  afterAll(async () => {
    await client?.close();
    await provider?.close();
    await elsewhere?.close();
    await l?.close();
    await t?.dispose();
  });

  it('reports each step of a run as progress, then answers', async () => {
    const project = await givenAgent(provider, KEY);
    const file = await givenNumbersSkill(t, project);
    provider.when(
      { lastUser: 'sum of the numbers' },
      (body) =>
        body.messages.some((m) => m.role === 'tool')
          ? fakeReply.text('The sum is 6.')
          : fakeReply.toolCall('sql_db_query', { query: `SELECT sum(n) AS s FROM files.${file}` }),
      { times: 2 },
    );
    const progress: { progress: number; message?: string }[] = [];
    const result = (await client.callTool(
      {
        name: 'ask_agent',
        arguments: { project, agent: 'helper', question: 'What is the sum of the numbers?' },
      },
      CallToolResultSchema,
      { onprogress: (p) => progress.push({ progress: p.progress, message: p.message }) },
    )) as CallToolResult;
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({
      answer: 'The sum is 6.',
      sql: [expect.stringContaining('sum(n)')],
    });
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
    expect(progress.map((p) => p.message)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/asking the model/),
        expect.stringMatching(/calling sql_db_query/),
      ]),
    );
  });

  it('stops a cancelled run: the run fails on its own stream, the call is recorded as cancelled', async () => {
    const project = await givenAgent(provider, KEY);
    provider.when({ lastUser: 'think forever' }, fakeReply.hang());
    const controller = new AbortController();
    const asked = client.callTool(
      { name: 'ask_agent', arguments: { project, agent: 'helper', question: 'Please think forever' } },
      CallToolResultSchema,
      { signal: controller.signal },
    );
    asked.catch(() => undefined);
    // The run has started (its first event is in the log) before it is cancelled.
    let traceId = '';
    await until(async () => {
      const started = await t.running.ctx.log.readPage({ after: 0n, limit: 10_000 });
      const run = started.filter(
        (e) => e.type === 'AgentRunStarted' && (e.data as { project: string }).project === project,
      );
      traceId = (run[0]?.data as { traceId?: string } | undefined)?.traceId ?? '';
      return traceId !== '';
    }, 'the run to start');
    controller.abort('the user changed their mind');
    await expect(asked).rejects.toThrow();
    await until(
      async () => (await runEvents(traceId)).some((e) => e.type === 'AgentRunFailed'),
      'the run to fail',
    );
    const failed = (await runEvents(traceId)).find((e) => e.type === 'AgentRunFailed')!;
    expect(failed.data).toMatchObject({ kind: 'aborted' });
    let record: { outcome: string; traceId: string | null } | undefined;
    await until(async () => {
      const events = await t.running.ctx.log.readPage({ after: 0n, limit: 10_000 });
      record = events
        .filter((e) => e.type === 'McpCallRecorded')
        .map((e) => e.data as { outcome: string; traceId: string | null })
        .find((d) => d.traceId === traceId);
      return record !== undefined;
    }, 'the call to be recorded');
    expect(record).toMatchObject({ outcome: 'cancelled', traceId });
  });

  it('sends the stored key to its provider only: not into the record, the answer, nor to another provider', async () => {
    const withKey = await givenAgent(provider, KEY);
    const withoutKey = await givenAgent(elsewhere);
    provider.when({ lastUser: 'secret-check' }, fakeReply.text('fine'));
    elsewhere.when({ lastUser: 'secret-check' }, fakeReply.text('also fine'));
    const first = (await client.callTool({
      name: 'ask_agent',
      arguments: { project: withKey, agent: 'helper', question: 'secret-check one' },
    })) as CallToolResult;
    const second = (await client.callTool({
      name: 'ask_agent',
      arguments: { project: withoutKey, agent: 'helper', question: 'secret-check two' },
    })) as CallToolResult;
    expect([first.isError, second.isError]).toEqual([false, false]);
    const sentTo = (fake: FakeOpenAi) =>
      fake
        .requests()
        .filter((r) => JSON.stringify(r.body).includes('secret-check'))
        .map((r) => r.headers.authorization ?? '');
    expect(sentTo(provider)).toEqual([`Bearer ${KEY}`]);
    expect(sentTo(elsewhere).every((h) => !h.includes(KEY))).toBe(true);
    for (const result of [first, second]) {
      expect(JSON.stringify(result)).not.toContain(KEY);
      const event = await t.running.ctx.log.eventAt(BigInt(receiptOf(result).position));
      expect(JSON.stringify(event!.data)).not.toContain(KEY);
    }
  });
});
