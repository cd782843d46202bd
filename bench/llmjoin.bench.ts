import fs from 'node:fs';
import path from 'node:path';
import { querySql, startTestApp, type TestApp } from '../test/support/app';
import { fakeReply, lastUserText, startFakeOpenAi } from '../test/support/fakeOpenAi';
import { fmt, tmpDir } from './support';

const rowsOf = (a: { data?: unknown[][]; error_message?: string }) => {
  if (!a.data) throw new Error(`query failed: ${a.error_message}`);
  return a.data;
};

/** A file of `rows` texts, `distinct` of them different. */
const givenTexts = async (t: TestApp, name: string, rows: number, distinct: number, word = 'text') => {
  const dir = tmpDir('llm-bench-');
  const file = path.join(dir, `${name}.csv`);
  const lines = Array.from({ length: rows }, (_, i) => `${i + 1},${word} number ${i % distinct}`);
  fs.writeFileSync(file, `id,text\n${lines.join('\n')}\n`);
  const res = await t.http.put(`/api/files/${name}`).attach('file', file);
  if (res.status !== 200) throw new Error(`upload: ${res.status}`);
  fs.rmSync(dir, { recursive: true, force: true });
};

/**
 * Rows per second through an LLM JOIN against a local stand-in answering after a fixed latency: the
 * bound is LLM_SQL_CONCURRENCY / latency, printed beside each figure. Then the answer cache: the
 * same JOIN again (every prompt cached), and a table whose prompts repeat (asked once each).
 */
export const benchLlmJoin = async () => {
  const latencyMs = Number(process.env.BENCH_LLM_LATENCY_MS ?? 50);
  const rows = Number(process.env.BENCH_LLM_ROWS ?? 200);
  const fake = await startFakeOpenAi();
  fake.setFallback((body) => fakeReply.text(`summary of ${lastUserText(body)}`, { delayMs: latencyMs }));
  try {
    for (const concurrency of [1, 4, 16]) {
      const t = await startTestApp('sqlite', {
        LLM_SQL_CONCURRENCY: String(concurrency),
        LLM_SQL_MAX_CALLS: String(rows * 2),
        LLM_CACHE_ENTRIES: String(rows * 4),
      });
      try {
        await querySql(
          t,
          `CREATE ML_ENGINE bench_engine FROM openai USING openai_api_key = 'sk-b', api_base = '${fake.baseUrl}'`,
        );
        await querySql(
          t,
          `CREATE MODEL mindsdb.bench_llm PREDICT answer USING engine = 'bench_engine', model_name = 'm', prompt_template = 'Summarize: {{text}}'`,
        );
        await givenTexts(t, 'bench_texts', rows, rows);
        const join = `SELECT t.id, m.answer FROM files.bench_texts AS t JOIN mindsdb.bench_llm AS m`;
        const before = fake.chatRequests().length;
        let t0 = performance.now();
        const first = rowsOf(await querySql(t, join));
        const coldMs = performance.now() - t0;
        const calls = fake.chatRequests().length - before;
        t0 = performance.now();
        rowsOf(await querySql(t, join));
        const warmMs = performance.now() - t0;
        const bound = (concurrency * 1000) / latencyMs;
        console.log(
          `LLM JOIN, ${first.length} rows, ${calls} calls at ${latencyMs} ms each, LLM_SQL_CONCURRENCY=${concurrency}: ${fmt(
            (first.length / coldMs) * 1000,
          )} rows/s vs the bound ${fmt(bound)} rows/s (concurrency / latency) → ${fmt(
            ((first.length / coldMs) * 1000) / bound,
            2,
          )}; again, every answer cached: ${fmt((first.length / warmMs) * 1000)} rows/s, ${
            fake.chatRequests().length - before - calls
          } calls`,
        );
        if (concurrency === 4) {
          await givenTexts(t, 'bench_repeats', rows, rows / 4, 'other');
          const b = fake.chatRequests().length;
          t0 = performance.now();
          const repeated = rowsOf(
            await querySql(
              t,
              `SELECT t.id, m.answer FROM files.bench_repeats AS t JOIN mindsdb.bench_llm AS m`,
            ),
          );
          const ms = performance.now() - t0;
          const [usage] = rowsOf(
            await querySql(t, `SELECT sum(CALLS), sum(CACHED_ANSWERS) FROM information_schema.LLM_USAGE`),
          ) as [number, number][];
          console.log(
            `LLM JOIN, ${repeated.length} rows with ${rows / 4} distinct prompts: ${fake.chatRequests().length - b} calls (identical prompts asked once), ${fmt(
              (repeated.length / ms) * 1000,
            )} rows/s; cache over the run: ${usage![1]} cached answers of ${Number(usage![0]) + Number(usage![1])} (${fmt(
              (Number(usage![1]) / (Number(usage![0]) + Number(usage![1]))) * 100,
            )}% hit rate)`,
          );
        }
      } finally {
        await t.dispose();
      }
    }
  } finally {
    await fake.close();
  }
};
