/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  // Specs share one PostgreSQL server and the machine has 2 cores.
  maxWorkers: 2,
  // A fresh worker for every spec file: a worker reused across the whole suite grew to ~4 GB (read
  // models, pools and timers of earlier files' apps) and, late in the run, PostgreSQL specs ran ten
  // times slower than alone and timed out. Recycling costs a worker start per file (heapUsed is
  // always above 1 MB, so jest replaces the worker after each file).
  workerIdleMemoryLimit: '1MB',
  testTimeout: 30000,
};
