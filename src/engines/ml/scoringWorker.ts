import { parentPort } from 'node:worker_threads';
import { scoreClaimedChunks, type ScoringJob } from './scoringPool';

/** A scoring pool's worker: says it is ready, then claims chunks of each batch it is sent and says when it has finished. */
parentPort!.on('message', (job: ScoringJob) => {
  scoreClaimedChunks(job);
  parentPort!.postMessage(null);
});
parentPort!.postMessage(null);
