import { fakeReply, startFakeOpenAi } from '../test/support/fakeOpenAi';
import { fmt, percentile, ratio, startServer, stopServer, tmpDir } from './support';

const PORT = 47446;
const BASE = `http://127.0.0.1:${PORT}`;

const call = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
  const res = await fetch(`${BASE}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

const ok = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
  const res = await call(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
};

const sql = async (query: string) => {
  const answer = await ok('POST', '/api/sql/query', { query });
  if (answer.type !== 'table') throw new Error(`${query}: ${JSON.stringify(answer)}`);
  return answer.data as unknown[][];
};

/** Runs `count` jobs with `clients` of them in flight at once; each job's latency in ms. */
const withClients = async (count: number, clients: number, job: (i: number) => Promise<void>) => {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < count; i = next++) {
        const t0 = performance.now();
        await job(i);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return latencies;
};

const until = async (what: string, probe: () => Promise<boolean>, ms = 60_000) => {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/**
 * Chatbot conversations against the agent they wrap, over the same instant fake provider in one
 * run: (a) throughput, M messages posted by 16 clients over 50 chats (202, answered in the
 * background by the processor) until all are answered, against M direct agent completions by 16
 * clients; (b) one client at a time, `?wait=true` inbound→answered latency against a direct
 * completion's.
 */
export const benchChat = async () => {
  const messages = Number(process.env.BENCH_CHAT_MESSAGES ?? 500);
  const chats = Number(process.env.BENCH_CHAT_CHATS ?? 50);
  const clients = Number(process.env.BENCH_CHAT_CLIENTS ?? 16);
  const sequential = Number(process.env.BENCH_CHAT_LATENCY_RUNS ?? 200);
  const settings = {
    CHATBOT_POLL_MS: process.env.BENCH_CHATBOT_POLL_MS ?? '50',
    CHATBOT_CONCURRENCY: process.env.BENCH_CHATBOT_CONCURRENCY ?? String(clients),
  };
  const fake = await startFakeOpenAi();
  fake.setFallback(fakeReply.text('Your parcel is in Lyon.'));
  const server = await startServer('app-server.ts', {
    PORT: String(PORT),
    DATA_DIR: tmpDir('mindledger-bench-chat-'),
    BENCH_LOG_LEVEL: 'warn',
    ...settings,
  });
  try {
    await ok('POST', '/api/projects', { name: 'bench_chat' });
    await ok('POST', '/api/projects/bench_chat/agents', {
      agent: {
        name: 'clerk',
        model: { provider: 'openai', model_name: 'fake-model', api_key: 'sk-bench', base_url: fake.baseUrl },
      },
    });
    await ok('POST', '/api/databases', {
      database: {
        name: 'bench_chat_hook',
        engine: 'webhook',
        parameters: { url: 'http://127.0.0.1:9/unused' },
      },
    });
    await ok('POST', '/api/projects/bench_chat/chatbots', {
      chatbot: { name: 'desk', agent_name: 'clerk', database_name: 'bench_chat_hook', is_running: true },
    });
    const messagesPath = '/api/projects/bench_chat/chatbots/desk/messages';
    const completion = async (question: string) => {
      const res = await call('POST', '/api/projects/bench_chat/agents/clerk/completions', {
        messages: [{ question, answer: null }],
      });
      if (res.status !== 200)
        throw new Error(`completion answered ${res.status}: ${JSON.stringify(res.body)}`);
    };
    const ask = async (text: string, chatId: string) => {
      const res = await call('POST', `${messagesPath}?wait=true`, { text, chat_id: chatId, user: 'ann' });
      if (res.status !== 200) throw new Error(`message answered ${res.status}: ${JSON.stringify(res.body)}`);
    };
    const answeredCount = async (prefix: string) =>
      Number(
        (
          await sql(
            `SELECT COUNT(*) FROM information_schema.CHAT_MESSAGES WHERE CHATBOT = 'desk' AND CHAT_ID LIKE '${prefix}%' AND ANSWER_ID IS NOT NULL`,
          )
        )[0]![0],
      );

    for (let i = 0; i < 20; i++) {
      await completion(`warm up ${i}`);
      await ask(`warm up ${i}`, 'warmup');
    }

    // (a) Throughput: the baseline first, then the same number of messages through the chatbot.
    let t0 = performance.now();
    await withClients(messages, clients, (i) => completion(`question ${i}`));
    const baselineMs = performance.now() - t0;

    t0 = performance.now();
    await withClients(messages, clients, async (i) => {
      const res = await call('POST', messagesPath, {
        text: `question ${i}`,
        chat_id: `load-${i % chats}`,
        user: `user-${i % chats}`,
      });
      if (res.status !== 202) throw new Error(`message refused ${res.status}: ${JSON.stringify(res.body)}`);
    });
    const postedMs = performance.now() - t0;
    await until(`${messages} answers`, async () => (await answeredCount('load-')) >= messages, 90_000);
    const answeredMs = performance.now() - t0;

    const [[answers, messagesAnswered]] = (await sql(
      "SELECT COUNT(*), COUNT(DISTINCT json_extract_string(DATA, '$.messageId')) FROM information_schema.EVENTS WHERE TYPE = 'ChatAnswered'",
    )) as [[unknown, unknown]];
    const chatPerSecond = (messages / answeredMs) * 1000;
    const baselinePerSecond = (messages / baselineMs) * 1000;
    console.log(
      `chatbot throughput (${messages} messages over ${chats} chats, ${clients} clients, POST …/messages then polled until answered): ${fmt(chatPerSecond)} messages/s (posting took ${fmt(postedMs)} ms, all answered after ${fmt(answeredMs)} ms) vs ${messages} direct agent completions at ${clients} concurrent ${fmt(baselinePerSecond)} completions/s → ratio ${fmt(ratio(chatPerSecond, baselinePerSecond), 2)}×; ChatAnswered events ${String(answers)} for ${String(messagesAnswered)} messages (incl. warm-up)`,
    );

    // (b) Latency, one client at a time: a message with ?wait=true against a direct completion.
    const chatMs: number[] = [];
    const directMs: number[] = [];
    for (let i = 0; i < sequential; i++) {
      let t = performance.now();
      await ask(`latency ${i}`, `latency-${i % 10}`);
      chatMs.push(performance.now() - t);
      t = performance.now();
      await completion(`latency ${i}`);
      directMs.push(performance.now() - t);
    }
    const recorded = (
      await sql(
        "SELECT epoch_ms(ANSWERED_AT) - epoch_ms(RECEIVED_AT) FROM information_schema.CHAT_MESSAGES WHERE CHATBOT = 'desk' AND CHAT_ID LIKE 'latency-%'",
      )
    ).map((r) => Number(r[0]));
    const p = (values: number[], q: number) => fmt(percentile(values, q), 1);
    console.log(
      `chatbot inbound→answered latency (?wait=true, 1 client, ${sequential} messages over 10 chats): p50 ${p(chatMs, 50)} ms p99 ${p(chatMs, 99)} ms (recorded received→answered p50 ${p(recorded, 50)} ms p99 ${p(recorded, 99)} ms) vs direct agent completion p50 ${p(directMs, 50)} ms p99 ${p(directMs, 99)} ms → ratio ${fmt(ratio(percentile(chatMs, 50), percentile(directMs, 50)), 2)}× at p50`,
    );
    console.log(
      `chatbot bench settings: CHATBOT_POLL_MS=${settings.CHATBOT_POLL_MS} CHATBOT_CONCURRENCY=${settings.CHATBOT_CONCURRENCY}, SQLite log, instant fake provider; ?wait=true polls the read model every 50 ms (service.ts)`,
    );
  } finally {
    await stopServer(server);
    await fake.close();
  }
};
