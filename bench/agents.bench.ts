import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { buildSystemPrompt, runAgent, toolsFromSkills } from '../src/engines/agentLoop';
import { createLlmClient } from '../src/engines/llm';
import { memorySqlPort, ordersTable } from '../test/agentloop/memoryPorts';
import { fakeReply, startFakeOpenAi } from '../test/support/fakeOpenAi';
import { fmt, percentile, ratio } from './support';

const COUNT_SQL = 'SELECT COUNT(*) AS n FROM shop.orders';

/**
 * The agent loop's own cost per completion: one text2sql exchange (list tables → schema → query →
 * answer, four model calls) through `runAgent`, against the same four requests sent with the bare
 * `openai` client, both over the same in-process fake provider, interleaved in one run. Then 50
 * runs at once.
 */
export const benchAgentLoop = async (iterations = Number(process.env.BENCH_AGENT_RUNS ?? 300)) => {
  const fake = await startFakeOpenAi();
  const script = () => {
    fake.reset();
    fake.conversation([
      fakeReply.toolCall('sql_db_list_tables', {}),
      fakeReply.toolCall('sql_db_schema', { tables: ['shop.orders'] }),
      fakeReply.toolCall('sql_db_query', { query: COUNT_SQL }),
      fakeReply.text('There are 4 orders.'),
    ]);
  };
  try {
    script();
    const sql = memorySqlPort(
      { orders: ordersTable },
      { 'select count(*) as n from shop.orders': { columns: ['n'], rows: [[4]] } },
    );
    const tools = toolsFromSkills(
      { skills: [{ name: 'shop', type: 'sql', params: { database: 'shop', tables: ['orders'] } }] },
      { sql: sql.port },
    );
    const systemPrompt = buildSystemPrompt({ promptTemplate: 'You answer questions about the shop.', tools });
    const llm = createLlmClient({
      provider: 'openai',
      model: 'fake-model',
      baseUrl: fake.baseUrl,
      apiKey: 'sk-bench',
    });
    const run = (question: string) =>
      runAgent({
        llm,
        model: 'fake-model',
        systemPrompt,
        history: [],
        question,
        tools,
        onEvent: () => undefined,
      });

    // The exact requests the loop sends, replayed raw.
    await run('How many orders are there?');
    const bodies = fake
      .chatRequests()
      .map((b) => ({ ...b, stream: false }) as ChatCompletionCreateParamsNonStreaming);
    const raw = new OpenAI({ apiKey: 'sk-bench', baseURL: fake.baseUrl, maxRetries: 0 });
    const rawExchange = async () => {
      for (const body of bodies) await raw.chat.completions.create(body);
    };

    for (let i = 0; i < 20; i++) {
      await run('warm up');
      await rawExchange();
    }
    script();

    const loopMs: number[] = [];
    const rawMs: number[] = [];
    for (let i = 0; i < iterations; i++) {
      let t0 = performance.now();
      const result = await run('How many orders are there?');
      loopMs.push(performance.now() - t0);
      if (result.answer !== 'There are 4 orders.') throw new Error(`unexpected answer ${result.answer}`);
      t0 = performance.now();
      await rawExchange();
      rawMs.push(performance.now() - t0);
      // Only to drop the recorded requests: the script itself keeps no state.
      script();
    }
    const overhead = loopMs.map((ms, i) => ms - rawMs[i]!);

    const concurrent = 50;
    const t0 = performance.now();
    const settled = await Promise.allSettled(
      Array.from({ length: concurrent }, (_, i) => run(`How many orders are there? (#${i})`)),
    );
    const wallMs = performance.now() - t0;
    const failed = settled.filter(
      (s) =>
        s.status === 'rejected' || s.value.answer !== 'There are 4 orders.' || s.value.sql[0] !== COUNT_SQL,
    ).length;

    const p = (values: number[], q: number) => fmt(percentile(values, q), 2);
    console.log(
      `agent loop, text2sql completion (4 model calls, 3 tools) over the fake provider, ${iterations} runs: p50 ${p(loopMs, 50)} ms p99 ${p(loopMs, 99)} ms vs the same 4 requests with the bare openai client p50 ${p(rawMs, 50)} ms p99 ${p(rawMs, 99)} ms → ratio ${fmt(ratio(percentile(loopMs, 50), percentile(rawMs, 50)), 2)}×`,
    );
    console.log(
      `agent loop overhead per completion (loop − raw, paired): p50 ${p(overhead, 50)} ms p99 ${p(overhead, 99)} ms (${fmt(percentile(overhead, 50) / 4, 2)} ms per model call at p50)`,
    );
    console.log(
      `${concurrent} concurrent completions: ${concurrent - failed}/${concurrent} answered correctly, ${failed} errors, ${fmt(wallMs)} ms wall (${fmt((concurrent / wallMs) * 1000)} completions/s)`,
    );
    return { loopMs, rawMs, overhead, failed };
  } finally {
    await fake.close();
  }
};
