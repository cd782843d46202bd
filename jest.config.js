/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    // jose (a dependency of the A2A SDK) ships ES modules only: Node 20 requires them, jest's module
    // system does not, so jest compiles them to CommonJS.
    '/node_modules/jose/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  // Specs share one PostgreSQL server and the machine has 2 cores.
  maxWorkers: 2,
  // A fresh worker for every spec file: a worker reused across the whole suite grew to ~4 GB (read
  // models, pools and timers of earlier files' apps) and, late in the run, PostgreSQL specs ran ten
  // times slower than alone and timed out. Recycling costs a worker start per file (heapUsed is
  // always above 1 MB, so jest replaces the worker after each file).
  workerIdleMemoryLimit: '1MB',
  testTimeout: 30000,
};
