import crypto from 'node:crypto';

/** This process's random part: a v4 UUID's first four groups (74 random bits). */
const processPart = crypto.randomUUID().slice(0, 24);
let issued = 0;

/**
 * A request id shaped like a UUID: this process's random part, then a counter in the last group.
 * Unique within the process, and across processes as their random parts are. A MySQL `SELECT 1`
 * made one per statement; `crypto.randomUUID()` cost about 3 µs of its 37 (it draws fresh random
 * bytes every 128 ids).
 */
export const nextRequestId = (): string => {
  issued = (issued + 1) % 0x1000000000000;
  return processPart + issued.toString(16).padStart(12, '0');
};
