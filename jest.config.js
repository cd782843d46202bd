/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] },
  // Specs share one PostgreSQL server and the machine has 2 cores.
  maxWorkers: 2,
  testTimeout: 30000,
};
