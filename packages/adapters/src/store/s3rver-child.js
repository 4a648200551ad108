'use strict';
// Runs s3rver (a real S3-compatible HTTP server) for the tests, in its own process so it can use the legacy
// OpenSSL provider: s3rver 3.7 encrypts ListObjectsV2 continuation tokens with DES, which Node 20 refuses otherwise.
// Two behaviours of s3rver 3.7.1 differ from S3 in ways the ObjectStore contract relies on; both are patched below
// (see the comments there). Nothing else is changed: HTTP, XML, ranges, multipart and pagination are s3rver's own.
// Usage: node --openssl-legacy-provider s3rver-child.js <directory> [--fs-order]
// Prints {"port":N} once listening; exits when stdin closes (the parent died) or on SIGTERM.
//
// s3rver lists keys in filesystem-walk order (directory `a/` before sibling `a-b`), not in S3's byte order, and
// paginates with "skip keys <= last key", so its later pages drop keys. Unless --fs-order is given, its walk is
// replaced by one that visits each directory in S3 key order (a directory `d` sorts as `d/`), which is what S3,
// MinIO, R2 and GCS do.
const fs = require('node:fs');
const path = require('node:path');

const OBJECT_SUFFIX = '._S3rver_object';
const args = process.argv.slice(2);
const directory = args.find((a) => !a.startsWith('--'));
if (!directory) throw new Error('usage: s3rver-child.js <directory> [--fs-order]');

if (!args.includes('--fs-order')) {
  const utils = require('s3rver/lib/utils');
  utils.walk = function* walk(dir, recurseFilter) {
    const entries = fs.readdirSync(dir, { withFileTypes: true }).map((e) => ({
      e,
      sortKey: e.isDirectory() ? `${e.name}/` : e.name.endsWith(OBJECT_SUFFIX) ? e.name.slice(0, -OBJECT_SUFFIX.length) : `${e.name}\uffff`,
    }));
    entries.sort((a, b) => Buffer.compare(Buffer.from(a.sortKey), Buffer.from(b.sortKey)));
    for (const { e } of entries) {
      const p = path.posix.join(dir, e.name);
      if (!e.isDirectory()) yield p;
      else if (!recurseFilter || recurseFilter(p)) yield* walk(p, recurseFilter);
    }
  };
}
// s3rver writes an object in place (truncate, then stream) and answers before the bytes are on disk, so readers can
// see a partial object and concurrent puts of one key interleave. S3 makes each put visible whole, last writer wins:
// here each put is buffered, written to a temp file, renamed over the object, and puts of one key run one at a time.
const FilesystemStore = require('s3rver/lib/stores/filesystem');
const putLocks = new Map();
let tmpSeq = 0;
FilesystemStore.prototype.putObject = function putObject(object) {
  const id = `${object.bucket}/${object.key}`;
  const run = (putLocks.get(id) || Promise.resolve()).catch(() => undefined).then(async () => {
    const content = Buffer.isBuffer(object.content) ? object.content : await readAll(object.content);
    const md5 = require('node:crypto').createHash('md5').update(content).digest('hex');
    const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
    await fs.promises.mkdir(path.dirname(objectPath), { recursive: true });
    const tmp = `${objectPath}.~tmp-${process.pid}-${++tmpSeq}`;
    await fs.promises.writeFile(tmp, content);
    await fs.promises.rename(tmp, objectPath);
    await this.putMetadata(object.bucket, object.key, object.metadata, md5);
    return { size: content.length, md5 };
  });
  putLocks.set(id, run);
  run.finally(() => putLocks.get(id) === run && putLocks.delete(id)).catch(() => undefined);
  return run;
};

async function readAll(stream) {
  const chunks = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return Buffer.concat(chunks);
}

const S3rver = require('s3rver');

(async () => {
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const addr = await server.run();
  process.stdout.write(`${JSON.stringify({ port: addr.port })}\n`);
  const stop = () => server.close().finally(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.stdin.on('end', stop).resume();
})().catch((err) => {
  process.stderr.write(`${err && err.stack ? err.stack : String(err)}\n`);
  process.exit(1);
});
