// Jest runs TypeScript sources directly through swc (no type-check: `npm run typecheck` does that).
// ESM-only packages are transformed too, so CommonJS test code can load them.
const esmOnly = ['hyparquet', 'hyparquet-compressors', 'franc-min', 'trigram-utils', 'n-gram', 'collapse-white-space'];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  transform: {
    '^.+\\.(t|j|mj)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  moduleNameMapper: {
    '^@ccpipe/(core|adapters|mirror|batcher)$': '<rootDir>/packages/$1/src/index.ts',
    '^@ccpipe/(core|adapters|mirror|batcher)/(.*)$': '<rootDir>/packages/$1/src/$2',
  },
  testTimeout: 60000,
};
