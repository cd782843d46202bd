import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService, type Service } from '../support/service';

/**
 * A small filesystem of its own (tmpfs, `size` MB) mounted on a fresh directory: a disk that really
 * fills (ENOSPC from the kernel, not a mock). Needs CAP_SYS_ADMIN (the suite runs as root); a loop
 * device would do where tmpfs is refused.
 */
export const mountSmallDisk = (sizeMb: number) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fault-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir]);
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
};

/**
 * Takes every byte left on the filesystem holding `dir` with one file: in 1 MiB pieces, then
 * smaller ones, until the kernel answers ENOSPC. Returns the file, and how many bytes it took.
 */
export const fillDisk = (dir: string) => {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'w');
  let taken = 0;
  try {
    for (const size of [1 << 20, 1 << 16, 1 << 12, 512]) {
      const piece = Buffer.alloc(size, 1);
      for (;;) {
        try {
          taken += fs.writeSync(fd, piece);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
          break;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return { file, taken };
};

export type Outcome = { name: string; status: number; detail: string; retryAfter: string | null };

/** Counts by status, for the figures a spec prints. */
export const byStatus = (outcomes: readonly Outcome[]) => {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o.status] = (counts[o.status] ?? 0) + 1;
  return counts;
};

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The process is still running and never met Node's heap limit; when it is gone, the end of its
 * output is printed first, to say why.
 */
export const expectLivedOn = (service: Service) => {
  const alive = service.child.exitCode === null && service.child.signalCode === null;
  if (!alive) console.log(service.output().split('\n').slice(-60).join('\n'));
  expect(alive).toBe(true);
  expect(service.output()).not.toMatch(/heap out of memory|FATAL ERROR|Allocation failed/i);
};

/**
 * The real service in a process of its own on `dataDir`, with a Node heap of `heapMb` and DuckDB's
 * memory limit at 256MB, its jobs and triggers not polling.
 */
export const startSmallHeapService = (dataDir: string, heapMb: number, env: Record<string, string> = {}) =>
  startService({
    DATA_DIR: dataDir,
    NODE_OPTIONS: [process.env.NODE_OPTIONS, `--max-old-space-size=${heapMb}`].filter(Boolean).join(' '),
    DUCKDB_MEMORY_LIMIT: '256MB',
    JOBS_POLL_MS: '0',
    TRIGGERS_POLL_MS: '0',
    ...env,
  });
