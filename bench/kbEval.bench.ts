import fs from 'node:fs';
import path from 'node:path';
import { fmt, startServer, stopServer, tmpDir } from './support';

const PORT = 47441;
const base = `http://127.0.0.1:${PORT}`;

/** The shipped evaluation set (test/fixtures/kb-eval), from the sources or from dist-bench/. */
const fixture = (name: string) =>
  [path.join(__dirname, '..', 'test'), path.join(__dirname, '..', '..', 'test')]
    .map((dir) => path.join(dir, 'fixtures', 'kb-eval', name))
    .find((file) => fs.existsSync(file))!;

type SqlAnswer = { type: string; column_names?: string[]; data?: unknown[][]; error_message?: string };

const sql = async (query: string) => {
  const res = await fetch(`${base}/api/sql/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  const answer = (await res.json()) as SqlAnswer;
  if (answer.type === 'error') throw new Error(`${query.slice(0, 120)}: ${answer.error_message}`);
  return answer;
};

const upload = async (name: string, file: string) => {
  const form = new FormData();
  form.append('file', new Blob([fs.readFileSync(file)]), `${name}.csv`);
  const res = await fetch(`${base}/api/files/${name}`, { method: 'PUT', body: form });
  if (res.status >= 300) throw new Error(`upload ${name}: ${res.status} ${await res.text()}`);
};

const METHODS = [
  { name: 'built-in embedder (alpha 1)', alpha: 1 },
  { name: 'BM25 alone (alpha 0)', alpha: 0 },
  { name: 'hybrid (alpha 0.5)', alpha: 0.5 },
] as const;

/**
 * EVALUATE KNOWLEDGE_BASE on the shipped set through `POST /api/sql/query`, once per search method:
 * the built-in embedder alone, BM25 alone, and their hybrid, with the scores each evaluation records.
 */
export const benchKbEvaluation = async () => {
  const dataDir = tmpDir('mindledger-bench-kbeval-');
  const server = await startServer('app-server.ts', {
    PORT: String(PORT),
    DATA_DIR: dataDir,
    BENCH_LOG_LEVEL: 'warn',
  });
  try {
    await upload('eval_documents', fixture('documents.csv'));
    await upload('eval_questions', fixture('questions.csv'));
    await sql('CREATE PROJECT bench_eval');
    await sql(`CREATE KNOWLEDGE_BASE bench_eval.kb USING content_columns = ['content'], id_column = 'id'`);
    await sql('INSERT INTO bench_eval.kb SELECT id, content FROM files.eval_documents');
    const rows: { name: string; score: Record<string, number> }[] = [];
    for (const m of METHODS) {
      const answer = await sql(
        `EVALUATE KNOWLEDGE_BASE bench_eval.kb USING test_table = files.eval_questions, hybrid_search_alpha = ${m.alpha}`,
      );
      const names = answer.column_names ?? [];
      const row = answer.data![0]!;
      rows.push({ name: m.name, score: Object.fromEntries(names.map((n, i) => [n, Number(row[i])])) });
    }
    const first = rows[0]!.score;
    console.log(
      `knowledge base evaluation (EVALUATE KNOWLEDGE_BASE, doc_id): the shipped set test/fixtures/kb-eval, ${first.documents} documents, ${first.total} questions, top ${first.top_k}`,
    );
    console.log(
      `  ${'method'.padEnd(30)} ${'hit rate'.padStart(8)} ${'MRR'.padStart(7)} ${'recall@1'.padStart(9)} ${'recall@5'.padStart(9)} ${'recall@10'.padStart(10)}`,
    );
    for (const r of rows)
      console.log(
        `  ${r.name.padEnd(30)} ${fmt(r.score.hit_rate!, 3).padStart(8)} ${fmt(r.score.mrr!, 3).padStart(7)} ${fmt(r.score.recall_at_1!, 3).padStart(9)} ${fmt(r.score.recall_at_5!, 3).padStart(9)} ${fmt(r.score.recall_at_10!, 3).padStart(10)}`,
      );
    const [vector, keyword, hybrid] = rows.map((r) => r.score) as [
      Record<string, number>,
      Record<string, number>,
      Record<string, number>,
    ];
    const beats = hybrid.mrr! > vector.mrr! && hybrid.mrr! > keyword.mrr!;
    console.log(
      `  → hybrid MRR ${fmt(hybrid.mrr!, 3)} vs embedder ${fmt(vector.mrr!, 3)} (×${fmt(hybrid.mrr! / vector.mrr!, 2)}) and BM25 ${fmt(keyword.mrr!, 3)} (×${fmt(hybrid.mrr! / keyword.mrr!, 2)}): hybrid ${beats ? 'beats' : 'does NOT beat'} each alone`,
    );
  } finally {
    await stopServer(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};
