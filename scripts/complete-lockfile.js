#!/usr/bin/env node
'use strict';
// The npm registry reachable from these machines serves only the linux-x64 builds of packages that ship
// per-platform binaries (@swc/core-*, @node-rs/xxhash-*, …). `npm install` then leaves the other
// platforms' optional dependencies out of package-lock.json, and `npm ci` refuses the lock as "not in
// sync". This script adds each missing optional platform package as a stub entry carrying the os/cpu/libc
// its name declares, so `npm ci` sees a complete lock and skips them on this platform, exactly as it
// would with a lock written on a machine that could see the whole registry.
// Run after any `npm install` that changes dependencies: `node scripts/complete-lockfile.js`.
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const pkgs = lock.packages;

const OS = ['darwin', 'linux', 'win32', 'freebsd', 'android', 'openharmony', 'netbsd', 'openbsd', 'sunos', 'aix'];
const CPU = ['x64', 'arm64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64', 'wasm32', 'mips64el'];

/** The platform a binary package's name declares, or null when the name says none. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  if (parts.includes('wasm32')) return { cpu: ['wasm32'] };
  if (!os && !cpu) return null;
  const out = {};
  if (os) out.os = [os];
  if (cpu) out.cpu = [cpu];
  if (parts.some((p) => p.startsWith('musl'))) out.libc = ['musl'];
  else if (os === 'linux' && parts.some((p) => p.startsWith('gnu'))) out.libc = ['glibc'];
  return out;
}

/** Where npm would look for dependency `dep` of the package installed at `from`. */
function resolves(from, dep) {
  let dir = from;
  for (;;) {
    const candidate = (dir ? dir + '/' : '') + 'node_modules/' + dep;
    if (pkgs[candidate]) return true;
    if (!dir) return false;
    const i = dir.lastIndexOf('/node_modules/');
    dir = i < 0 ? '' : dir.slice(0, i);
  }
}

let added = 0;
for (const [loc, meta] of Object.entries(pkgs)) {
  for (const [dep, range] of Object.entries(meta.optionalDependencies || {})) {
    if (resolves(loc, dep)) continue;
    const platform = platformOf(dep);
    if (!platform) continue;
    const version = String(range).replace(/^[\^~=]/, '');
    pkgs['node_modules/' + dep] = { version, optional: true, ...(meta.dev ? { dev: true } : {}), ...platform };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(pkgs).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)));
fs.writeFileSync(lockPath, JSON.stringify(lock, null, 2) + '\n');
console.log(`complete-lockfile: added ${added} platform stub(s)`);
