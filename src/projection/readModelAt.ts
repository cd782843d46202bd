import { unavailable } from '../shared/errors';
import {
  describeFailure,
  ProjectionBehind,
  ProjectionStalled,
  retryAfterSeconds,
  type ProjectionRunner,
} from './runner';

/**
 * Waits until this process's read model includes log position `wanted`: what another process wrote
 * up to there is seen. Past `waitMs` (READ_MIN_POSITION_WAIT_MS), or while the read model is
 * stopped, 503 with Retry-After naming `asked` (what needed the position) and the position reached;
 * nothing was read or written.
 */
export const readModelAt = async (
  projections: Pick<ProjectionRunner, 'waitFor' | 'highestApplied'>,
  wanted: bigint,
  waitMs: number,
  asked: string,
) => {
  try {
    await projections.waitFor(wanted, waitMs);
  } catch (error) {
    if (error instanceof ProjectionBehind)
      throw unavailable(
        `This process's read model has not reached ${asked} within ${waitMs} ms (READ_MIN_POSITION_WAIT_MS); it has reached position ${projections.highestApplied}. Retry shortly.`,
        1,
        'Read model behind',
      );
    if (error instanceof ProjectionStalled)
      throw unavailable(
        `This process's read model cannot reach ${asked}: it is stopped, ${describeFailure(error.failure)}; it has reached position ${projections.highestApplied}. It is retried automatically.`,
        retryAfterSeconds(error.failure),
        'Read model stopped',
      );
    throw error;
  }
};
