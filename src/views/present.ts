import type { ViewRow } from './projection';

/** A view as MindsDB's REST answers it: `{id, name, query}`. */
export const presentView = (row: ViewRow) => ({ id: Number(row.ID), name: row.NAME, query: row.QUERY });
