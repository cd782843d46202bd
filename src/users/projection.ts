import { allHandled, selectRows, tableProjection, type RowOf } from '../projection/table';
import { deletableTable, patchRow } from '../projection/resourceTable';
import { columns } from '../projection/columns';
import type { TableReader } from '../projection/types';

/** `users`: who may sign in, and as what (no password hashes: those stay in the log). */
export const usersTable = deletableTable({
  table: 'users',
  key: 'ID',
  columns: columns(
    'ID BIGINT, NAME VARCHAR, ROLE VARCHAR, CREATED_AT TIMESTAMP, PASSWORD_CHANGED_AT TIMESTAMP NULL',
  ),
  handles: ['UserCreated', 'UserPasswordChanged', 'UserRoleChanged', 'UserDeleted'],
  deletedBy: { type: 'UserDeleted', key: (e) => BigInt(e.data.userId) },
  apply: async (event, rows) => {
    switch (event.type) {
      case 'UserCreated':
        rows.insert({
          ID: event.meta.position,
          NAME: event.data.name,
          ROLE: event.data.role,
          CREATED_AT: event.data.createdAt,
          PASSWORD_CHANGED_AT: null,
        });
        return;
      case 'UserPasswordChanged':
      case 'UserRoleChanged':
        return patchRow(
          rows,
          BigInt(event.data.userId),
          event.type === 'UserRoleChanged'
            ? { ROLE: event.data.role }
            : { PASSWORD_CHANGED_AT: event.data.changedAt },
        );
      default:
        return allHandled(event);
    }
  },
});

/** `access_tokens`: live personal access tokens (no secrets, no hashes). */
export const accessTokensTable = deletableTable({
  table: 'access_tokens',
  key: 'TOKEN_ID',
  columns: columns(
    `TOKEN_ID VARCHAR, USER_ID BIGINT, USER_NAME VARCHAR, NAME VARCHAR, PROJECT VARCHAR NULL,
    EXPIRES_AT TIMESTAMP NULL, CREATED_AT TIMESTAMP`,
  ),
  handles: ['AccessTokenCreated', 'AccessTokenRevoked', 'UserDeleted'],
  deletedBy: { type: 'UserDeleted', column: 'USER_ID', id: (e) => e.data.userId },
  apply: async (event, rows) => {
    switch (event.type) {
      case 'AccessTokenCreated':
        rows.put({
          TOKEN_ID: event.data.tokenId,
          USER_ID: BigInt(event.data.userId),
          USER_NAME: event.data.user,
          NAME: event.data.name,
          PROJECT: event.data.project,
          EXPIRES_AT: event.data.expiresAt,
          CREATED_AT: event.data.createdAt,
        });
        return;
      case 'AccessTokenRevoked':
        rows.delete(event.data.tokenId);
        return;
      default:
        return allHandled(event);
    }
  },
});

/** `sessions`: sign-ins, when they end and why (a deleted user's sessions end with it). */
export const sessionsTable = tableProjection({
  table: 'sessions',
  key: 'SESSION_ID',
  columns: columns(
    `SESSION_ID VARCHAR, USER_ID BIGINT, USER_NAME VARCHAR, ADDRESS VARCHAR, STARTED_AT TIMESTAMP,
    EXPIRES_AT TIMESTAMP, ENDED_AT TIMESTAMP NULL, END_REASON VARCHAR NULL`,
  ),
  handles: ['SessionStarted', 'SessionEnded', 'UserDeleted', 'UserPasswordChanged'],
  apply: async (event, rows) => {
    switch (event.type) {
      case 'SessionStarted':
        rows.put({
          SESSION_ID: event.data.sessionId,
          USER_ID: BigInt(event.data.userId),
          USER_NAME: event.data.user,
          ADDRESS: event.data.address,
          STARTED_AT: event.data.startedAt,
          EXPIRES_AT: event.data.expiresAt,
          ENDED_AT: null,
          END_REASON: null,
        });
        return;
      case 'SessionEnded': {
        const row = await rows.get(event.data.sessionId);
        if (row && row.ENDED_AT === null)
          rows.put({ ...row, ENDED_AT: event.data.endedAt, END_REASON: event.data.reason });
        return;
      }
      case 'UserDeleted':
      case 'UserPasswordChanged': {
        const userId = BigInt(event.data.userId);
        const at = event.type === 'UserDeleted' ? event.data.deletedAt : event.data.changedAt;
        const open = await rows.scan({ USER_ID: userId, ENDED_AT: null });
        for (const row of open) rows.put({ ...row, ENDED_AT: at, END_REASON: 'revoked' });
        return;
      }
      default:
        return allHandled(event);
    }
  },
});

export type UserRow = RowOf<typeof usersTable.columns>;
export type TokenRow = RowOf<typeof accessTokensTable.columns>;

export const userRows = async (reader: TableReader) =>
  selectRows(usersTable, reader, 'SELECT * FROM users ORDER BY ID');

export const tokenRows = async (reader: TableReader, userId: number | null) =>
  userId === null
    ? selectRows(accessTokensTable, reader, 'SELECT * FROM access_tokens ORDER BY CREATED_AT, TOKEN_ID')
    : selectRows(
        accessTokensTable,
        reader,
        'SELECT * FROM access_tokens WHERE USER_ID = ? ORDER BY CREATED_AT, TOKEN_ID',
        [userId],
      );
