/**
 * The columns every project resource's table has (`createdCells` in resourceTable.ts fills them),
 * in the places MindsDB's tables put them: NAME and PROJECT first, then the resource's own columns,
 * its ID and PROJECT_ID, the columns MindsDB does not show, and last its stamps. Parts of a
 * `columns(...)` list (columns.ts).
 */
export const NAME_AND_PROJECT = 'NAME VARCHAR, PROJECT VARCHAR';
export const RESOURCE_IDS = 'ID BIGINT, PROJECT_ID BIGINT';
export const CREATED_AT = 'CREATED_AT TIMESTAMP';
/** When the resource was made and last changed (a table that keeps none of its changes has CREATED_AT only). */
export const CHANGE_STAMPS = `${CREATED_AT}, UPDATED_AT TIMESTAMP` as const;
/** The stamps, and VERSION: the position of the resource's last change. */
export const RESOURCE_STAMPS = `${CHANGE_STAMPS}, VERSION BIGINT` as const;
