// npm run bench: prints each comparison measured in this one run. BENCH_ONLY=http,writes,… picks some;
// the slow ones (ml, ledger, secrets, kb, chat, predictjoin, jobs, soak) run only when named.
import os from 'node:os';
import path from 'node:path';
import { REPOSITORY } from '../test/support/data';
import { benchAgentLoop } from './agents.bench';
import { benchAsOf } from './asof.bench';
import { type BenchOutput, recordPrinted, writeLatestRun } from './latestRun';
import { loadAverage } from './support';
import { benchChat } from './chat.bench';
import { benchCompletions } from './completions.bench';
import { benchData } from './data.bench';
import { benchHttp } from './http.bench';
import { benchJobs } from './jobs.bench';
import { benchKnowledgeBases } from './kb.bench';
import { benchKbEvaluation } from './kbEval.bench';
import { benchLag } from './lag.bench';
import { benchLedger } from './ledger.bench';
import { benchLedgerSecrets } from './ledgerSecrets.bench';
import { benchLlmBatch } from './llmbatch.bench';
import { benchLlmJoin } from './llmjoin.bench';
import { benchLoad } from './load.bench';
import { benchMcp } from './mcp.bench';
import { benchMemory } from './memory.bench';
import { benchMl } from './ml.bench';
import { benchModels } from './models.bench';
import { benchNoisyNeighbour } from './noisy.bench';
import { benchMysql } from './mysql.bench';
import { benchPostgres } from './postgres.bench';
import { benchPredictJoin } from './predictjoin.bench';
import { benchReplay } from './replay.bench';
import { benchSql } from './sql.bench';
import { benchSqlStream } from './sqlStream.bench';
import { benchSoak } from './soak.bench';
import { benchTraining } from './training.bench';
import { benchVerify } from './verify.bench';
import { benchProjectWrites, benchWrites } from './writes.bench';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const benches: Record<string, () => Promise<unknown>> = {
  http: () => benchHttp(seconds),
  writes: async () => {
    await benchWrites(Number(process.env.BENCH_WRITES ?? 2000));
    await benchProjectWrites(Number(process.env.BENCH_WRITES ?? 2000));
  },
  replay: () => benchReplay(Number(process.env.BENCH_EVENTS ?? 100_000)),
  verify: () => benchVerify(Number(process.env.BENCH_EVENTS ?? 100_000)),
  sql: () => benchSql(seconds),
  sqlstream: () => benchSqlStream(Number(process.env.BENCH_STREAM_ROWS ?? 2_000_000)),
  data: () => benchData(),
  models: () => benchModels(),
  load: () => benchLoad(seconds),
  agents: () => benchAgentLoop(),
  completions: () => benchCompletions(),
  mysql: () => benchMysql(seconds),
  postgres: () => benchPostgres(seconds),
  ml: () => benchMl(),
  ledger: () => benchLedger(),
  secrets: () => benchLedgerSecrets(),
  kb: () => benchKnowledgeBases(),
  kbeval: () => benchKbEvaluation(),
  chat: () => benchChat(),
  lag: () => benchLag(seconds),
  predictjoin: () => benchPredictJoin(),
  jobs: () => benchJobs(),
  noisy: () => benchNoisyNeighbour(seconds),
  mcp: () => benchMcp(seconds),
  memory: () => benchMemory(),
  llmjoin: () => benchLlmJoin(),
  llmbatch: () => benchLlmBatch(),
  training: () => benchTraining(),
  // Not in the default set: 30 minutes unless BENCH_SOAK_MINUTES says otherwise.
  soak: () =>
    benchSoak(Number(process.env.BENCH_SOAK_MINUTES ?? 30), Number(process.env.BENCH_SOAK_RATE ?? 300)),
  asof: () => benchAsOf(Number(process.env.BENCH_ASOF_EVENTS ?? 1_000_000)),
};
const DEFAULT =
  'http,writes,replay,verify,sql,sqlstream,data,models,load,agents,completions,mysql,postgres,lag,noisy,mcp,memory,kbeval,llmjoin,llmbatch,training,asof';
const only = (process.env.BENCH_ONLY ?? DEFAULT).split(',');

const main = async () => {
  const printed = recordPrinted();
  const machine = () =>
    `${new Date().toISOString()}, node ${process.version}, ${os.cpus().length} cores, load average ${loadAverage()}`;
  console.log(`mindledger benchmarks (${machine()})`);
  const ran: BenchOutput[] = [];
  for (const name of only.map((n) => n.trim())) {
    const bench = benches[name];
    if (!bench) throw new Error(`Unknown benchmark ${name}; known: ${Object.keys(benches).join(', ')}`);
    const startedAt = machine();
    const from = printed().length;
    await bench();
    ran.push({ name, machine: startedAt, lines: printed().slice(from) });
  }
  // BENCH_DOCS=1: docs/benchmarks.md's "Latest run" section takes each benchmark's output as printed
  // (the default set first, then the ones run only when named).
  if (process.env.BENCH_DOCS === '1')
    writeLatestRun(
      path.join(REPOSITORY, 'docs/benchmarks.md'),
      ran,
      [...DEFAULT.split(','), ...Object.keys(benches)],
      DEFAULT.split(',').every((name) => ran.some((o) => o.name === name)),
    );
};

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
