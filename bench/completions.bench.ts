import OpenAI from 'openai';
import { fakeReply, startFakeOpenAi } from '../test/support/fakeOpenAi';
import { fmt, percentile, startServer, stopServer, tmpDir } from './support';

const post = async (url: string, body: unknown) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as unknown };
};

const timed = async <T>(work: () => Promise<T>) => {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
};

/**
 * The service's own cost per completion: `POST …/completions` for a plain answer (one model call)
 * against the same model call made with the bare `openai` client, both to the same fake provider,
 * interleaved in one run; then 50 completions at once, and `/api/util/ping` while they run.
 */
export const benchCompletions = async (iterations = Number(process.env.BENCH_COMPLETIONS ?? 300)) => {
  const fake = await startFakeOpenAi();
  fake.setFallback(fakeReply.text('The answer is 42.'));
  const dataDir = tmpDir('mindledger-bench-completions-');
  const server = await startServer('app-server.ts', {
    PORT: '47436',
    DATA_DIR: dataDir,
    BENCH_LOG_LEVEL: 'warn',
  });
  const base = 'http://127.0.0.1:47436';
  try {
    await post(`${base}/api/projects/mindsdb/agents`, {
      agent: {
        name: 'bench_agent',
        model: { model_name: 'fake-model', provider: 'openai', api_key: 'sk-bench', base_url: fake.baseUrl },
      },
    });
    const client = new OpenAI({ apiKey: 'sk-bench', baseURL: fake.baseUrl, maxRetries: 0 });
    const raw = () =>
      client.chat.completions.create({
        model: 'fake-model',
        messages: [
          { role: 'system', content: 'You are a helpful assistant.' },
          { role: 'user', content: 'What is the answer?' },
        ],
        temperature: 0,
      });
    const completion = () =>
      post(`${base}/api/projects/mindsdb/agents/bench_agent/completions`, {
        messages: [{ question: 'What is the answer?', answer: null }],
      });
    for (let i = 0; i < 20; i++) {
      await raw();
      await completion();
    }
    const rawMs: number[] = [];
    const serviceMs: number[] = [];
    for (let i = 0; i < iterations; i++) {
      rawMs.push((await timed(raw)).ms);
      const { value, ms } = await timed(completion);
      if (value.status !== 200)
        throw new Error(`completion answered ${value.status}: ${JSON.stringify(value.body)}`);
      serviceMs.push(ms);
    }
    const overhead = (p: number) => percentile(serviceMs, p) - percentile(rawMs, p);
    console.log(
      `agent completion (one model call, recorded as a run): service p50 ${fmt(percentile(serviceMs, 50), 2)} ms p99 ${fmt(percentile(serviceMs, 99), 2)} ms vs bare openai call p50 ${fmt(percentile(rawMs, 50), 2)} ms p99 ${fmt(percentile(rawMs, 99), 2)} ms → the service's own cost p50 ${fmt(overhead(50), 2)} ms, p99 ${fmt(overhead(99), 2)} ms (${iterations} each, interleaved)`,
    );

    // Pings alone, then while 50 completions run at once (each model call takes 200 ms).
    const ping = async () => (await timed(() => fetch(`${base}/api/util/ping`).then((r) => r.text()))).ms;
    const idle: number[] = [];
    for (let i = 0; i < 200; i++) idle.push(await ping());
    fake.setFallback(fakeReply.text('The answer is 42.', { delayMs: 200 }));
    const busy: number[] = [];
    let pinging = true;
    const pinger = (async () => {
      while (pinging) busy.push(await ping());
    })();
    const { value: results, ms: wall } = await timed(() =>
      Promise.all(Array.from({ length: 50 }, () => completion())),
    );
    pinging = false;
    await pinger;
    const failed = results.filter((r) => r.status !== 200).length;
    console.log(
      `50 concurrent completions (provider answers in 200 ms): ${50 - failed}/50 answered, ${failed} errors, ${fmt(wall)} ms wall; /api/util/ping p99 ${fmt(percentile(busy, 99), 1)} ms while they ran vs ${fmt(percentile(idle, 99), 1)} ms idle (${busy.length} pings)`,
    );
  } finally {
    await stopServer(server);
    await fake.close();
  }
};
