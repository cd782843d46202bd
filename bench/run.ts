// npm run bench: prints each comparison measured in this one run. Set BENCH_ONLY=http,writes,replay to pick.
import { benchData } from './data.bench';
import { benchHttp } from './http.bench';
import { benchLoad } from './load.bench';
import { benchModels } from './models.bench';
import { benchReplay } from './replay.bench';
import { benchSql } from './sql.bench';
import { benchWrites } from './writes.bench';

const only = (process.env.BENCH_ONLY ?? 'http,writes,replay,sql,data,models,load').split(',');

const main = async () => {
  console.log(`mindledger benchmarks (node ${process.version}, ${new Date().toISOString()})`);
  if (only.includes('http')) await benchHttp(Number(process.env.BENCH_SECONDS ?? 5));
  if (only.includes('writes')) await benchWrites(Number(process.env.BENCH_WRITES ?? 500));
  if (only.includes('replay')) await benchReplay(Number(process.env.BENCH_EVENTS ?? 100_000));
  if (only.includes('sql')) await benchSql(Number(process.env.BENCH_SECONDS ?? 5));
  if (only.includes('data')) await benchData();
  if (only.includes('models')) await benchModels();
  if (only.includes('load')) await benchLoad(Number(process.env.BENCH_SECONDS ?? 5));
};

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
