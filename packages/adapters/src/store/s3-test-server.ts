// Test support (not built): a real S3-compatible server (s3rver) on 127.0.0.1, port 0, in a child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

/** s3rver's fixed credentials. */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** A running s3rver. */
export interface S3TestServer {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  /** A client for it (path style, s3rver credentials). */
  client: S3Client;
  /** Creates a bucket (CreateBucket). */
  createBucket(name: string): Promise<void>;
  /** Stops the server and removes its directory. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts s3rver over a fresh temp directory. `fsOrder: true` keeps s3rver's own listing order (filesystem walk,
 * not S3's byte order) to test how a non-conformant server is handled; see s3rver-child.js.
 */
export async function startS3TestServer(opts: { fsOrder?: boolean } = {}): Promise<S3TestServer> {
  const dir = await mkdtemp(join(tmpdir(), 'ccp-s3rver-'));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--openssl-legacy-provider', join(__dirname, 's3rver-child.js'), dir, ...(opts.fsOrder ? ['--fs-order'] : [])],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (l) => resolve((JSON.parse(l) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`s3rver exited ${code}: ${stderr.slice(-2000)}`)));
  });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: S3RVER_CREDENTIALS, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  let closing: Promise<void> | null = null;
  return {
    endpoint,
    client,
    createBucket: async (name) => {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    close: () =>
      (closing ??= (async () => {
        client.destroy();
        child.stdin!.end();
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
        await rm(dir, { recursive: true, force: true });
      })()),
  };
}
