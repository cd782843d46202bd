/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/support/environment.ts',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    // jose (a dependency of the A2A SDK) ships ES modules only: Node 20 requires them, jest's module
    // system does not, so jest compiles them to CommonJS.
    '/node_modules/jose/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  // Specs share one PostgreSQL server and the machine has 2 cores. A third worker was measured
  // (issue 38): jest took 683–721 s against 696 s with two, the same tree, and timing-sensitive
  // specs failed more often under its load.
  maxWorkers: 2,
  // A worker is reused until its heap passes 1 GB, then replaced. Apps no longer outlive their close
  // (the login limiters' timers and prom-client's process metrics kept every app a worker had built;
  // a worker grew to ~4 GB and late PostgreSQL specs ran ten times slower), but jest keeps each spec
  // file's context through Node's own WeakMaps, about 28 MB a file, so a worker is still recycled
  // every few dozen files rather than after each (a worker start is about a second).
  workerIdleMemoryLimit: '1GB',
  testTimeout: 30000,
  // Scratch files in memory when /dev/shm has room (test/support/tmpfs.ts).
  globalSetup: '<rootDir>/test/support/tmpfs.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
};
