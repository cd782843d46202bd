import { PgState } from '../errors';
import type { Report } from '../protocol/backend';

/** A statement's failure as the client is told it (an ErrorResponse); the connection goes on. */
export class StatementError extends Error {
  constructor(readonly report: Report) {
    super(report.message);
    this.name = 'StatementError';
  }
}

/** Why a running statement was stopped: its client is told in a 57014/57P01 error. */
export type StopReason = 'cancel' | 'shutdown' | 'gone';
const STOPPED: Record<StopReason, { code: string; message: string }> = {
  cancel: { code: PgState.QueryCanceled, message: 'canceling statement due to user request' },
  shutdown: {
    code: PgState.AdminShutdown,
    message: 'terminating statement because the server is shutting down',
  },
  gone: { code: PgState.QueryCanceled, message: 'canceling statement: the client went away' },
};

export const error = (code: string, message: string): Report => ({ severity: 'ERROR', code, message });

export const stoppedReport = (reason: unknown): Report => {
  const stop = STOPPED[(typeof reason === 'string' && reason in STOPPED ? reason : 'cancel') as StopReason];
  return error(stop.code, stop.message);
};
