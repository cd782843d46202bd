import fs from 'node:fs';
import path from 'node:path';
import { querySql, startTestApp } from '../test/support/app';
import { batchRowsOf, fakeReply, lastUserText, startFakeOpenAi } from '../test/support/fakeOpenAi';
import { fmt, tmpDir } from './support';

const rowsOf = (a: { data?: unknown[][]; error_message?: string }) => {
  if (!a.data) throw new Error(`query failed: ${a.error_message}`);
  return a.data;
};

/**
 * Batched LLM calls (src/llmCalls/batching.ts): a JOIN of BENCH_LLM_BATCH_ROWS (10,000) distinct
 * rows with an LLM model, against the stand-in answering each request after 200 ms, batched or
 * not. Prints the time, the provider requests, and whether every answer equals the row-by-row one
 * (the stand-in answers each row deterministically; a sample is also asked row by row for real).
 */
export const benchLlmBatch = async () => {
  const latencyMs = Number(process.env.BENCH_LLM_LATENCY_MS ?? 200);
  const rows = Number(process.env.BENCH_LLM_BATCH_ROWS ?? 10_000);
  const fake = await startFakeOpenAi();
  const answerOf = (prompt: string) => `summary of ${prompt}`;
  fake.setFallback((body) => fakeReply.text(answerOf(lastUserText(body)), { delayMs: latencyMs }));
  try {
    for (const concurrency of [4, 8]) {
      const t = await startTestApp('sqlite', {
        LLM_SQL_CONCURRENCY: String(concurrency),
        LLM_SQL_MAX_CALLS: '1000',
        LLM_SQL_TIMEOUT_MS: '600000',
      });
      try {
        await querySql(
          t,
          `CREATE ML_ENGINE batch_engine FROM openai USING openai_api_key = 'sk-b', api_base = '${fake.baseUrl}'`,
        );
        await querySql(
          t,
          `CREATE MODEL mindsdb.batch_llm PREDICT answer USING engine = 'batch_engine', model_name = 'gpt-4o-mini', prompt_template = 'Summarize: {{text}}'`,
        );
        const dir = tmpDir('llm-batch-');
        const file = path.join(dir, 'batch_texts.csv');
        const lines = Array.from({ length: rows }, (_, i) => `${i + 1},review ${i} of the product`);
        fs.writeFileSync(file, `id,text\n${lines.join('\n')}\n`);
        const up = await t.http.put('/api/files/batch_texts').attach('file', file);
        if (up.status !== 200) throw new Error(`upload: ${up.status}`);
        fs.rmSync(dir, { recursive: true, force: true });

        fake.reset();
        fake.setFallback((body) => fakeReply.text(answerOf(lastUserText(body)), { delayMs: latencyMs }));
        const t0 = performance.now();
        const answer = rowsOf(
          await querySql(
            t,
            `SELECT t.id, t.text, m.answer FROM files.batch_texts AS t JOIN mindsdb.batch_llm AS m ORDER BY t.id`,
          ),
        ) as [number, string, string][];
        const ms = performance.now() - t0;
        const requests = fake.chatRequests();
        const batched = requests.filter((b) => batchRowsOf(b) !== undefined).length;
        const equal = answer.every(([, text, said]) => said === answerOf(`Summarize: ${text}`));
        // A sample asked row by row for real (16 rows a query: fewer than a batch, so one by one).
        let sampleEqual = true;
        for (const from of [1, Math.floor(rows / 2), rows - 15]) {
          const one = rowsOf(
            await querySql(
              t,
              `SELECT t.id, m.answer FROM files.batch_texts AS t JOIN mindsdb.batch_llm AS m WHERE t.id BETWEEN ${from} AND ${from + 15} ORDER BY t.id`,
            ),
          ) as [number, string][];
          for (const [id, said] of one) if (answer[Number(id) - 1]![2] !== said) sampleEqual = false;
        }
        console.log(
          `LLM JOIN batched, ${answer.length} rows, stand-in at ${latencyMs} ms a request, LLM_SQL_CONCURRENCY=${concurrency}: ${fmt(
            ms / 1000,
            1,
          )} s, ${requests.length} provider requests (${batched} batches of up to 16 rows), ${fmt(
            (answer.length / ms) * 1000,
          )} rows/s; every answer equal to the row-by-row one: ${equal}; 48 sampled rows asked row by row equal: ${sampleEqual}; row by row it would take ≥ ${fmt(
            (rows * latencyMs) / concurrency / 1000,
            0,
          )} s and ${rows} requests`,
        );
      } finally {
        await t.dispose();
      }
    }
  } finally {
    await fake.close();
  }
};
