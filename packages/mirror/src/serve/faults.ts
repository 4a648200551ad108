import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

/** Opt-in fault injection for `serveMirror`; both off by default. */
export interface MirrorFaults {
  /** Every Nth request (N ≥ 1; counted over all requests since start) gets 503 SlowDown. */
  slowDownEvery?: number;
  /** Throttle every response body to about this many bytes per second. */
  slowBodyBytesPerSec?: number;
}

/** Seconds announced in `Retry-After` on an injected SlowDown. */
export const SLOW_DOWN_RETRY_AFTER_SECONDS = 1;

/** The XML body S3 sends with `503 SlowDown` (the RequestId/HostId are random, as on S3). */
export function slowDownBody(): string {
  const requestId = randomBytes(8).toString('hex').toUpperCase();
  const hostId = randomBytes(24).toString('base64');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message>' +
    `<RequestId>${requestId}</RequestId><HostId>${hostId}</HostId></Error>`
  );
}

/** Writes a 503 SlowDown reply (no body for HEAD). */
export function sendSlowDown(res: ServerResponse, head: boolean): void {
  const body = Buffer.from(slowDownBody(), 'utf8');
  res.writeHead(503, {
    'Content-Type': 'application/xml',
    'Content-Length': String(body.length),
    'Retry-After': String(SLOW_DOWN_RETRY_AFTER_SECONDS),
    Server: 'AmazonS3',
  });
  res.end(head ? undefined : body);
}

const TICK_MS = 100;

/**
 * Copies `src` to `res` at about `bytesPerSec`, in slices written every 100 ms, honouring
 * back-pressure. Stops quietly (destroying `src`) when the client goes away. Resolves when done.
 */
export async function pipeThrottled(src: Readable, res: ServerResponse, bytesPerSec: number): Promise<void> {
  const slice = Math.max(1, Math.floor((bytesPerSec * TICK_MS) / 1000));
  let gone = false;
  const onClose = (): void => {
    gone = true;
  };
  res.on('close', onClose);
  try {
    for await (const chunk of src) {
      const buf = chunk as Buffer;
      for (let i = 0; i < buf.length && !gone; i += slice) {
        const ok = res.write(buf.subarray(i, i + slice));
        await sleep(TICK_MS);
        if (!ok && !gone) await drainOrClose(res);
      }
      if (gone) break;
    }
  } finally {
    res.off('close', onClose);
    src.destroy();
    if (!gone) res.end();
  }
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
