/**
 * The columns every project resource's table has (`createdCells` in projectResource.ts fills them),
 * in the places MindsDB's tables put them: NAME and PROJECT first, then the resource's own columns,
 * its ID and PROJECT_ID, the columns MindsDB does not show, and last its stamps.
 */
export const NAME_AND_PROJECT = [
  { name: 'NAME', type: 'VARCHAR' },
  { name: 'PROJECT', type: 'VARCHAR' },
] as const;
export const RESOURCE_IDS = [
  { name: 'ID', type: 'BIGINT' },
  { name: 'PROJECT_ID', type: 'BIGINT' },
] as const;
export const CREATED_AT = { name: 'CREATED_AT', type: 'TIMESTAMP' } as const;
/** When the resource was made and last changed (a table that keeps none of its changes has CREATED_AT only). */
export const CHANGE_STAMPS = [CREATED_AT, { name: 'UPDATED_AT', type: 'TIMESTAMP' }] as const;
/** The stamps, and VERSION: the position of the resource's last change. */
export const RESOURCE_STAMPS = [...CHANGE_STAMPS, { name: 'VERSION', type: 'BIGINT' }] as const;
