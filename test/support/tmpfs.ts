import fs from 'node:fs';

/**
 * Jest's global set-up: the specs' scratch directories (every app's data directory, SQLite log and
 * DuckDB file, uploads, blobs) go to a directory of their own in memory (/dev/shm) when it has room,
 * else where they went before (the system's temporary directory). Files behave the same there; only
 * fsync and checkpoint writes are cheaper (about 35 ms of each app's start and stop here). Workers
 * inherit TMPDIR, so `os.tmpdir()` names it in every spec and every process a spec starts.
 */
const SHARED_MEMORY = '/dev/shm';
/**
 * Short: `/dev/shm/ml` and mkdtemp's 6 characters make 17, the longest temporary directory the
 * ledger's key-shaped-path specs can build a 43-character path under.
 */
const PREFIX = `${SHARED_MEMORY}/ml`;
/** Room the whole suite's scratch files need at once, with a margin (CI containers may give 64 MB). */
const ROOM_NEEDED = 4 * 1024 ** 3;

const roomIn = (dir: string) => {
  try {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return 0;
  }
};

export default () => {
  if (process.env.MINDLEDGER_TEST_TMPDIR) return;
  if (roomIn(SHARED_MEMORY) < ROOM_NEEDED) return;
  const dir = fs.mkdtempSync(PREFIX);
  process.env.MINDLEDGER_TEST_TMPDIR = dir;
  process.env.TMPDIR = dir;
};

/** Jest's global tear-down: the directory above goes, with whatever a spec left in it. */
export const removeScratch = () => {
  const dir = process.env.MINDLEDGER_TEST_TMPDIR;
  if (dir?.startsWith(PREFIX) && dir.length === PREFIX.length + 6)
    fs.rmSync(dir, { recursive: true, force: true });
};
