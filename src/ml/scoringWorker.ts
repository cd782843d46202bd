import { workerData } from 'node:worker_threads';
import { runHelper, type ScoringState } from './scoring';

/** The boosting helper thread (scoring.ts): scores rows outside each round's window. */
runHelper(workerData as ScoringState);
