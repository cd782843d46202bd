import { toMindsDbTimestamp } from '../shared/time';
import type { TokenRow, UserRow } from './projection';

const at = (value: Date | string | null) => (value === null ? null : toMindsDbTimestamp(value));

/** A user as the API shows it: never a password or its hash. */
export const presentUser = (row: UserRow) => ({
  id: Number(row.ID),
  name: row.NAME,
  role: row.ROLE,
  created_at: at(row.CREATED_AT),
  password_changed_at: at(row.PASSWORD_CHANGED_AT),
});

/** A token as listed: its id and what it reaches, never its secret (shown once, at creation). */
export const presentToken = (row: TokenRow) => ({
  id: row.TOKEN_ID,
  name: row.NAME,
  user: row.USER_NAME,
  project: row.PROJECT,
  expires_at: at(row.EXPIRES_AT),
  created_at: at(row.CREATED_AT),
});
