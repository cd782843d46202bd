import { isContainer, mapLeaves, type Container } from './jsonTree';

const toSafeScalar = (value: unknown): unknown => {
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value instanceof Date) return value.toISOString();
  return value;
};

const isValueContainer = (value: unknown): value is Container =>
  isContainer(value) && !(value instanceof Date);

/**
 * JSON for HTTP bodies: bigint becomes a number when it is a safe integer, else a string,
 * so clients never receive a value JavaScript would silently round. Iterative (its own stack),
 * so no value is too deep to convert.
 */
export const toJsonSafe = (value: unknown): unknown => mapLeaves(value, toSafeScalar, isValueContainer);
