// Jest runs TypeScript sources directly through swc (no type-check: `npm run typecheck` does that).
// ESM-only packages are transformed too, so CommonJS test code can load them.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * Every installed package that is ESM-only ("type": "module"): linkedom's parser stack, hyparquet, franc-min, ...
 * Jest (CommonJS here) must transform them; listing them by hand breaks on every dependency bump.
 */
function esmOnlyPackages(dir = join(__dirname, 'node_modules')) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.')) continue;
    if (name.startsWith('@')) {
      for (const sub of readdirSync(join(dir, name))) out.push(...checkPackage(dir, `${name}/${sub}`));
    } else out.push(...checkPackage(dir, name));
  }
  return out;
}
function checkPackage(dir, name) {
  try {
    return JSON.parse(readFileSync(join(dir, name, 'package.json'), 'utf8')).type === 'module' ? [name] : [];
  } catch {
    return [];
  }
}
const esmOnly = esmOnlyPackages().map((n) => n.replace(/[.+]/g, '\\$&'));

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  // tests/chaos and tests/fuzz run on their own, after `npm test` in CI: minutes of SIGKILLs and broker restarts
  // (`npm run chaos`), and 10,000 inputs per fuzz target, two minutes on both cores (`npm run fuzz:ci`).
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '<rootDir>/tests/chaos/', '<rootDir>/tests/fuzz/'],
  transform: {
    '^.+\\.(t|j|mj)s$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  moduleNameMapper: {
    '^@ccpipe/(core|adapters|mirror|batcher|worker|import|index|search|api)$': '<rootDir>/packages/$1/src/index.ts',
    '^@ccpipe/(core|adapters|mirror|batcher|worker|import|index|search|api)/(.*)$': '<rootDir>/packages/$1/src/$2',
  },
  testTimeout: 60000,
  // Two cores: jest's default (cores - 1) would run every suite one after another.
  maxWorkers: 2,
};
