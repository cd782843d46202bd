import { PgState } from '../errors';
import type { Report, TransactionStatus } from '../protocol/backend';
import type { LocalAnswer } from '../session/local';
import { error, StatementError } from './reports';

type TransactionAnswer = Extract<LocalAnswer, { kind: 'transaction' }>;

const notice = (code: string, message: string): Report => ({ severity: 'WARNING', code, message });

/**
 * A connection's transaction block as PostgreSQL's clients see it: the status ReadyForQuery
 * reports (`I` idle, `T` in a block, `E` failed), savepoints, and what ROLLBACK cannot undo. Every
 * statement is its own transaction in the engine, so a block is bookkeeping: drivers and
 * SQLAlchemy open one around everything, and expect its states and errors.
 */
export class TransactionBlock {
  status: TransactionStatus = 'I';
  /** Savepoints of the open block, oldest first (names folded as PostgreSQL folds them). */
  private savepoints: string[] = [];
  /** Statements that changed something since BEGIN: ROLLBACK warns that they stay. */
  private changed = 0;

  /** A statement failed: inside a block, the block fails until its end or ROLLBACK TO SAVEPOINT. */
  failed() {
    if (this.status === 'T') this.status = 'E';
  }

  /** A statement changed something (it stays, whatever the block's end). */
  changedSomething() {
    if (this.status === 'T') this.changed++;
  }

  /** Whether a statement may run now: in a failed block, only its end (or ROLLBACK TO) is taken. */
  assertOpen(firstWord: string | undefined) {
    if (
      this.status === 'E' &&
      firstWord !== 'ROLLBACK' &&
      firstWord !== 'ABORT' &&
      firstWord !== 'COMMIT' &&
      firstWord !== 'END'
    )
      throw new StatementError(
        error(
          PgState.InFailedTransaction,
          'current transaction is aborted, commands ignored until end of transaction block',
        ),
      );
  }

  /**
   * Applies BEGIN, COMMIT, ROLLBACK or a savepoint statement: the notices to send, whether the
   * block ended (its portals close), and the tag when it differs (COMMIT of a failed block is a
   * ROLLBACK). Throws what PostgreSQL refuses (25P01, 3B001).
   */
  apply(answer: TransactionAnswer): { notices: Report[]; ended: boolean; tag?: string } {
    switch (answer.action) {
      case 'begin':
        if (this.status !== 'I')
          return { notices: [notice('25001', 'there is already a transaction in progress')], ended: false };
        this.status = 'T';
        this.changed = 0;
        this.savepoints = [];
        return { notices: [], ended: false };
      case 'commit':
      case 'rollback': {
        const notices: Report[] = [];
        if (this.status === 'I') notices.push(notice('25P01', 'there is no transaction in progress'));
        if (answer.action === 'rollback' && this.changed > 0)
          notices.push(
            notice(
              '01000',
              `${this.changed} statement(s) since BEGIN stay applied: every statement here is its own transaction, which ROLLBACK cannot undo`,
            ),
          );
        const wasFailed = this.status === 'E';
        this.status = 'I';
        this.changed = 0;
        this.savepoints = [];
        return { notices, ended: true, tag: wasFailed ? 'ROLLBACK' : undefined };
      }
      case 'savepoint':
      case 'release':
      case 'rollbackToSavepoint': {
        const name = answer.savepoint ?? '';
        const verb =
          answer.action === 'savepoint'
            ? 'SAVEPOINT'
            : answer.action === 'release'
              ? 'RELEASE SAVEPOINT'
              : 'ROLLBACK TO SAVEPOINT';
        if (this.status === 'I')
          throw new StatementError(error('25P01', `${verb} can only be used in transaction blocks`));
        if (answer.action === 'savepoint') {
          this.assertOpen('SAVEPOINT');
          this.savepoints.push(name);
          return { notices: [], ended: false };
        }
        const at = this.savepoints.lastIndexOf(name);
        if (at < 0) throw new StatementError(error('3B001', `savepoint "${name}" does not exist`));
        // RELEASE drops the savepoint and those after it; ROLLBACK TO keeps it and undoes the failure.
        this.savepoints.length = answer.action === 'release' ? at : at + 1;
        if (answer.action === 'rollbackToSavepoint' && this.status === 'E') this.status = 'T';
        return { notices: [], ended: false };
      }
      default: {
        const _exhaustive: never = answer.action;
        return _exhaustive;
      }
    }
  }
}
