/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: '<rootDir>/test/support/environment.ts',
  // Modules compiled so that a worker's later spec files reuse what its earlier ones compiled.
  runtime: '<rootDir>/test/support/sharedCompileRuntime.cjs',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    // jose (a dependency of the A2A SDK) ships ES modules only: Node 20 requires them, jest's module
    // system does not, so jest compiles them to CommonJS.
    '/node_modules/jose/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  // Specs share one PostgreSQL server and the machine has 2 cores. Workers wait as well as compute
  // (processes they start, PostgreSQL, timers), so a third fills the gaps where there are some: on a
  // 2-core machine with quick cores, jest took 446 s with three workers against 464–491 s with two
  // (449 s with four), every spec passing; on a slower one that was busy throughout, three were no
  // faster (683–721 s against 696 s with two) and timing-sensitive specs failed more often there.
  maxWorkers: 3,
  // A worker is reused until its heap passes 1 GB, then replaced. Apps no longer outlive their close
  // (the login limiters' timers and prom-client's process metrics kept every app a worker had built;
  // a worker grew to ~4 GB and late PostgreSQL specs ran ten times slower), but jest keeps each spec
  // file's context through Node's own WeakMaps, about 28 MB a file, so a worker is still recycled
  // every few dozen files rather than after each (a worker start is about a second).
  workerIdleMemoryLimit: '1GB',
  testTimeout: 30000,
  // The ten slowest spec files, printed at the end of a run (CI's log).
  reporters: ['default', '<rootDir>/test/support/slowestFiles.cjs'],
  // Scratch files in memory when /dev/shm has room (test/support/tmpfs.ts).
  globalSetup: '<rootDir>/test/support/tmpfs.ts',
  globalTeardown: '<rootDir>/test/support/globalTeardown.ts',
};
