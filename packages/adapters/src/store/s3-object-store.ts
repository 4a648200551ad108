import { createHash } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from '@aws-sdk/client-s3';
import { CcpError, DEFAULT_RETRY_POLICY, retryDelayMs, runLanes, type ObjectInfo, type ObjectStore, type RetryPolicy } from '@ccpipe/core';
import { systemClock } from '../range-reader/system-clock';
import { checkRange } from './memory-object-store';
import { StoreReadError, validateKey, validatePrefix } from './store-key';

const MiB = 1024 * 1024;

/** Options of {@link S3ObjectStore}. */
export interface S3ObjectStoreOptions {
  bucket: string;
  /** Key prefix inside the bucket (`a/b`, no leading or trailing `/`; '' = the bucket root). Key `k` is `<prefix>/k`. */
  prefix?: string;
  /** Endpoint of an S3-compatible server, e.g. `http://127.0.0.1:9000`; unset = AWS. */
  endpoint?: string;
  /** Default `us-east-1` (most S3-compatible servers accept any region). */
  region?: string;
  /** `http(s)://endpoint/bucket/key` instead of `bucket.endpoint/key`. Default true: what S3-compatible servers expect. */
  forcePathStyle?: boolean;
  /** Static credentials; unset = the SDK's default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profile, role…). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Objects larger than this go up as a multipart upload. Default 16 MiB. */
  multipartThreshold?: number;
  /** Size of each multipart part except the last. Default 8 MiB (AWS S3 refuses parts under 5 MiB but the last). */
  partSize?: number;
  /** Parts uploaded at once. Default 4. */
  partConcurrency?: number;
  /**
   * Attempts per operation, first one included: a retryable failure (5xx, 503 SlowDown, throttling, a network error or
   * a timeout, also while the body is read) is tried again after an exponential pause with full jitter (`retryBaseMs`, doubling,
   * at most `retryMaxMs`). Default 5. The SDK's own retries are off: its retry budget stops retrying a whole client
   * after ≈ 25 failures, so a SlowDown storm would turn every later request into one attempt.
   */
  maxAttempts?: number;
  /** First retry pause (ms, before jitter). Default 200. */
  retryBaseMs?: number;
  /** Longest retry pause (ms). Default 10,000. */
  retryMaxMs?: number;
  /** Time to open a connection (ms). Default 10,000. */
  connectTimeoutMs?: number;
  /** Time to the response's headers (ms), a PUT's upload included. Default 300,000 (16 MiB at ≥ 55 KB/s). */
  requestTimeoutMs?: number;
  /** Longest silence on the socket, body included (ms): a server that stops sending fails the attempt. Default 60,000. */
  idleTimeoutMs?: number;
  /** `MaxKeys` of each ListObjectsV2 page. Default 1000 (the S3 maximum). */
  listPageSize?: number;
  /** Keys whose put is read back and compared (see {@link S3ObjectStore.put}). Default: keys ending in `manifest.json`. */
  verifyAfterPut?: (key: string) => boolean;
  /** A client to use instead of building one from the options above (its lifetime stays with the caller). */
  client?: S3Client;
}

/**
 * An ObjectStore in an S3-compatible bucket, under a key prefix, with path-style requests by default.
 *
 * - `put` is one PutObject up to `multipartThreshold`, else CreateMultipartUpload / UploadPart… /
 *   CompleteMultipartUpload (AbortMultipartUpload when any step fails). Either way S3 makes the object visible
 *   whole or not at all, so readers see the old bytes or the new ones. Every body carries Content-MD5, so the
 *   server refuses bytes damaged in transit.
 * - Nothing relies on conditional writes (If-None-Match / If-Match), which many S3-compatible servers ignore: the
 *   index manifest is protected by the single-merger rule, and its put is read back and compared so a second
 *   writer or a store without read-after-write consistency is reported instead of going unnoticed.
 * - Failed requests are retried by the store itself, request and body together (`maxAttempts`, `retrying`); what still fails throws
 *   `CCP_ERR_STORE_IO`, retryable for 5xx, 429 and network errors, not for other 4xx. A missing bucket, 401/403
 *   or bad credentials throw `CCP_ERR_STORE_ACCESS` (not retryable: a configuration error).
 * - `list` checks that the server lists in byte order and throws `CCP_ERR_STORE_ORDER` if not, since ListObjectsV2
 *   pagination by a server that does not sort silently skips keys. Objects under the prefix whose key is not a
 *   valid store key (written by other tools) are not listed.
 *
 * Call {@link S3ObjectStore.close} to release the connection pool.
 */
export class S3ObjectStore implements ObjectStore {
  readonly bucket: string;
  private readonly root: string;
  private readonly client: S3Client;
  private readonly ownsClient: boolean;
  private readonly multipartThreshold: number;
  private readonly partSize: number;
  private readonly partConcurrency: number;
  private readonly listPageSize: number;
  private readonly verifyAfterPut: (key: string) => boolean;
  private readonly maxAttempts: number;
  /** Pauses between attempts: the project's retry policy (exponential, full jitter), with this store's bounds. */
  private readonly retryPolicy: RetryPolicy;
  private closed = false;
  /** The bucket answered a HeadBucket: a 404 on HEAD means a missing object. */
  private bucketSeen = false;

  constructor(opts: S3ObjectStoreOptions) {
    if (!isBucketName(opts.bucket)) throw new CcpError('CCP_ERR_CONFIG', 'invalid S3 bucket name', { detail: { bucket: opts.bucket } });
    const prefix = (opts.prefix ?? '').replace(/^\/+|\/+$/g, '');
    if (prefix !== '') validateKey(prefix);
    this.bucket = opts.bucket;
    this.root = prefix === '' ? '' : `${prefix}/`;
    this.multipartThreshold = positive('multipartThreshold', opts.multipartThreshold, 16 * MiB);
    this.partSize = positive('partSize', opts.partSize, 8 * MiB);
    this.partConcurrency = positive('partConcurrency', opts.partConcurrency, 4);
    this.listPageSize = Math.min(1000, positive('listPageSize', opts.listPageSize, 1000));
    this.verifyAfterPut = opts.verifyAfterPut ?? ((k) => k.endsWith('manifest.json'));
    this.maxAttempts = positive('maxAttempts', opts.maxAttempts, 5);
    this.retryPolicy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: positive('retryBaseMs', opts.retryBaseMs, 200), maxDelayMs: positive('retryMaxMs', opts.retryMaxMs, 10_000) };
    this.ownsClient = opts.client === undefined;
    // The pinned SDK supports Node 20; its advisory that *later* releases need Node 22 is a multi-line stderr warning
    // in every service's log stream. An operator who sets the variable explicitly still decides.
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';
    this.client =
      opts.client ??
      new S3Client({
        region: opts.region ?? 'us-east-1',
        forcePathStyle: opts.forcePathStyle ?? true,
        maxAttempts: 1, // retried here, request and body together (retrying)
        // without timeouts one stalled connection hangs its caller for good (a merge, a worker's drain, the API's
        // manifest poll); the idle timeout also covers the body, which the SDK hands over after the headers
        requestHandler: {
          connectionTimeout: positive('connectTimeoutMs', opts.connectTimeoutMs, 10_000),
          requestTimeout: positive('requestTimeoutMs', opts.requestTimeoutMs, 300_000),
          throwOnRequestTimeout: true,
          socketTimeout: positive('idleTimeoutMs', opts.idleTimeoutMs, 60_000),
        },
        // Flexible checksums (x-amz-checksum-*, aws-chunked bodies) are not understood by every S3-compatible server;
        // Content-MD5, which all of them check, protects the bodies instead.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        ...(opts.endpoint !== undefined && { endpoint: opts.endpoint }),
        ...(opts.credentials !== undefined && { credentials: opts.credentials }),
      });
  }

  /**
   * Atomic replace: one PutObject, or a multipart upload above the threshold (aborted on failure, so no parts are
   * left billed). Keys accepted by `verifyAfterPut` are then read back: if the bytes differ (another writer
   * replaced the object, or the store is not read-after-write consistent) it throws `CCP_ERR_STORE_CONFLICT`.
   * Idempotent for the same bytes. @throws StoreKeyError, CcpError CCP_ERR_STORE_IO, CCP_ERR_STORE_CONFLICT
   */
  async put(key: string, data: Uint8Array): Promise<void> {
    const k = this.objectKey(key);
    if (data.length > this.multipartThreshold) await this.putMultipart(key, k, data);
    else await this.call('put', key, () => this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: k, Body: data, ContentLength: data.length, ContentMD5: md5(data) })));
    if (this.verifyAfterPut(key)) {
      const back = await this.get(key);
      if (back === null || !Buffer.from(back.buffer, back.byteOffset, back.byteLength).equals(Buffer.from(data.buffer, data.byteOffset, data.byteLength))) {
        throw new CcpError('CCP_ERR_STORE_CONFLICT', 'object read back after put differs: another writer replaced it, or the store is not read-after-write consistent', {
          retryable: false,
          detail: { key, size: data.length, readBack: back?.length ?? null },
        });
      }
    }
  }

  /** The whole object or null. @throws StoreKeyError, CCP_ERR_STORE_IO */
  async get(key: string): Promise<Uint8Array | null> {
    const k = this.objectKey(key);
    try {
      return await this.retrying(async () => {
        const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: k }));
        const bytes = await bodyOf(res.Body);
        if (res.ContentLength !== undefined && bytes.length !== res.ContentLength) throw shortBody(key, 'get', res.ContentLength, bytes.length);
        return bytes;
      });
    } catch (err) {
      if (isNotFound(err)) return null;
      throw ioError(err, 'get', key);
    }
  }

  /**
   * One ranged GetObject (`Range: bytes=a-b`); the length of the answer is checked. A zero-length range is a
   * HeadObject. @throws StoreKeyError, StoreReadError (missing, short, bad range), CCP_ERR_STORE_IO
   */
  async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    const k = this.objectKey(key);
    checkRange(key, offset, length);
    if (length === 0) {
      const info = await this.head(key);
      if (info === null) throw new StoreReadError('CCP_ERR_STORE_NOT_FOUND', 'object not found', { key });
      if (offset > info.size) throw new StoreReadError('CCP_ERR_STORE_RANGE', 'range past end of object', { key, offset, length, size: info.size });
      return new Uint8Array(0);
    }
    let bytes: Uint8Array;
    let contentRange: string | undefined;
    let whole: boolean;
    try {
      ({ bytes, contentRange, whole } = await this.retrying(async () => {
        const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: k, Range: `bytes=${offset}-${offset + length - 1}` }));
        const body = await bodyOf(res.Body);
        if (res.ContentLength !== undefined && body.length !== res.ContentLength) throw shortBody(key, 'getRange', res.ContentLength, body.length);
        return { bytes: body, contentRange: res.ContentRange, whole: res.$metadata.httpStatusCode === 200 };
      }));
    } catch (err) {
      if (isNotFound(err)) throw new StoreReadError('CCP_ERR_STORE_NOT_FOUND', 'object not found', { key });
      if (statusOf(err) === 416) throw new StoreReadError('CCP_ERR_STORE_RANGE', 'range past end of object', { key, offset, length });
      throw ioError(err, 'getRange', key);
    }
    if (whole || (contentRange === undefined && bytes.length > length)) {
      // The server ignored Range and sent the whole object (200): cut the slice out of it, whatever its size.
      if (offset + length > bytes.length) throw new StoreReadError('CCP_ERR_STORE_RANGE', 'range past end of object', { key, offset, length, size: bytes.length });
      return bytes.slice(offset, offset + length);
    }
    if (bytes.length !== length) {
      throw new StoreReadError('CCP_ERR_STORE_RANGE', 'range past end of object', { key, offset, length, got: bytes.length, contentRange });
    }
    return bytes;
  }

  /**
   * HeadObject. A HEAD answer has no body, so a missing bucket looks like a missing object (404): the first 404 is
   * told apart by a HeadBucket. @throws StoreKeyError, CCP_ERR_STORE_IO, CCP_ERR_STORE_ACCESS (no such bucket)
   */
  async head(key: string): Promise<ObjectInfo | null> {
    const k = this.objectKey(key);
    try {
      const res = await this.retrying(() => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: k })));
      return { key, size: res.ContentLength ?? 0 };
    } catch (err) {
      if (!isNotFound(err)) throw ioError(err, 'head', key);
    }
    if (!this.bucketSeen) {
      try {
        await this.retrying(() => this.client.send(new HeadBucketCommand({ Bucket: this.bucket })));
      } catch (err) {
        if (statusOf(err) === 404) {
          throw new CcpError('CCP_ERR_STORE_ACCESS', 'object store head refused (NoSuchBucket 404): check the bucket, endpoint, region and credentials', {
            retryable: false, cause: err, detail: { key, op: 'head', status: 404 },
          });
        }
        // refused (a credential without s3:ListBucket, a provider that denies HeadBucket) or failing: the bucket may
        // well be there, and the HEAD said the object is not; only a 404 names a missing bucket
        const e = ioError(err, 'head', key);
        if (e.code !== 'CCP_ERR_STORE_ACCESS') throw e;
      }
      this.bucketSeen = true;
    }
    return null;
  }

  /**
   * ListObjectsV2 pages (`listPageSize` keys each) followed by continuation token, streamed in byte order.
   * @throws StoreKeyError, CCP_ERR_STORE_IO, CCP_ERR_STORE_ORDER (the server does not list in byte order)
   */
  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    validatePrefix(prefix);
    let token: string | undefined;
    let prev: string | null = null;
    do {
      const input = { Bucket: this.bucket, Prefix: this.root + prefix, MaxKeys: this.listPageSize, ...(token !== undefined && { ContinuationToken: token }) };
      const res = await this.call('list', prefix, () => this.client.send(new ListObjectsV2Command(input)));
      for (const o of res.Contents ?? []) {
        if (o.Key === undefined || !o.Key.startsWith(this.root)) continue;
        const key = o.Key.slice(this.root.length);
        if (!isValidKey(key)) continue;
        if (prev !== null && key <= prev) {
          throw new CcpError('CCP_ERR_STORE_ORDER', 'the S3 server lists keys out of byte order: its paginated listings cannot be trusted', {
            retryable: false,
            detail: { prefix, previous: prev, key },
          });
        }
        prev = key;
        yield { key, size: o.Size ?? 0 };
      }
      if (res.IsTruncated === true && !res.NextContinuationToken) {
        throw new CcpError('CCP_ERR_STORE_IO', 'object store list failed (truncated page without a continuation token)', { retryable: true, detail: { prefix } });
      }
      token = res.IsTruncated === true ? res.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  /** DeleteObject; idempotent (S3 answers 204 for a missing key too). @throws StoreKeyError, CCP_ERR_STORE_IO */
  async delete(key: string): Promise<void> {
    const k = this.objectKey(key);
    try {
      await this.retrying(() => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: k })));
    } catch (err) {
      if (isNotFound(err)) return;
      throw ioError(err, 'delete', key);
    }
  }

  /** Releases the client's sockets (not a client passed in). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsClient) this.client.destroy();
  }

  private objectKey(key: string): string {
    validateKey(key);
    return this.root + key;
  }

  /** Runs one request, retried; whatever it throws in the end becomes a CcpError (CCP_ERR_STORE_IO). */
  private async call<T>(op: string, key: string, request: () => Promise<T>): Promise<T> {
    try {
      return await this.retrying(request);
    } catch (err) {
      throw ioError(err, op, key);
    }
  }

  /**
   * `attempt` again after a jittered exponential pause while it fails retryably (see {@link ioError}: no answer at
   * all, 5xx, 429, throttling and transient S3 codes, a short body), up to `maxAttempts`; a missing object, a range
   * past the end and access errors are final at once.
   */
  private async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    for (let n = 1; ; n++) {
      if (this.closed) throw new CcpError('CCP_ERR_STORE_IO', 'object store is closed', { retryable: false });
      try {
        return await attempt();
      } catch (err) {
        const final = n >= this.maxAttempts || this.closed || isNotFound(err) || statusOf(err) === 416 || !ioError(err, 'retry', '').retryable;
        if (final) throw err;
        await systemClock.sleep(retryDelayMs(this.retryPolicy, n));
      }
    }
  }

  private async putMultipart(key: string, k: string, data: Uint8Array): Promise<void> {
    const created = await this.call('put', key, () => this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: k })));
    const uploadId = created.UploadId;
    if (uploadId === undefined) throw new CcpError('CCP_ERR_STORE_IO', 'object store put failed (no multipart upload id)', { retryable: true, detail: { key } });
    try {
      const count = Math.ceil(data.length / this.partSize);
      const parts: CompletedPart[] = new Array<CompletedPart>(count);
      // On a failure no further part starts, and the abort below waits until no part is in flight: a part that
      // lands after the abort would stay stored (and billed) with no upload to clean it up.
      await runLanes(count, this.partConcurrency, async (i) => {
        const body = data.subarray(i * this.partSize, Math.min(data.length, (i + 1) * this.partSize));
        const input = { Bucket: this.bucket, Key: k, UploadId: uploadId, PartNumber: i + 1, Body: body, ContentLength: body.length, ContentMD5: md5(body) };
        const res = await this.call('put', key, () => this.client.send(new UploadPartCommand(input)));
        if (res.ETag === undefined) throw new CcpError('CCP_ERR_STORE_IO', 'object store put failed (part without ETag)', { retryable: true, detail: { key, part: i + 1 } });
        parts[i] = { ETag: res.ETag, PartNumber: i + 1 };
      });
      const complete = { Bucket: this.bucket, Key: k, UploadId: uploadId, MultipartUpload: { Parts: parts } };
      try {
        await this.call('put', key, () => this.client.send(new CompleteMultipartUploadCommand(complete)));
      } catch (err) {
        // a Complete whose answer was lost, retried: the upload is gone because it completed. The object of our size
        // in its place is ours (another writer of this key in the meantime is what the manifest read-back is for).
        const cause = (err as { cause?: unknown }).cause;
        if (nameOf(cause) !== 'NoSuchUpload' || (await this.head(key).catch(() => null))?.size !== data.length) throw err;
      }
    } catch (err) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: k, UploadId: uploadId })).catch(() => undefined);
      throw err;
    }
  }
}

/** True for an S3 bucket name (3–63 of lower-case letters, digits, `.` and `-`, starting and ending alphanumeric). */
export function isBucketName(name: string): boolean {
  return /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) && !name.includes('..');
}

function isValidKey(key: string): boolean {
  try {
    validateKey(key);
    return true;
  } catch {
    return false;
  }
}

function positive(name: string, v: number | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!Number.isSafeInteger(v) || v < 1) throw new CcpError('CCP_ERR_CONFIG', `S3 store option ${name} must be a positive integer`, { detail: { [name]: v } });
  return v;
}

function md5(data: Uint8Array): string {
  return createHash('md5').update(data).digest('base64');
}

async function bodyOf(body: { transformToByteArray(): Promise<Uint8Array> } | undefined): Promise<Uint8Array> {
  return body === undefined ? new Uint8Array(0) : body.transformToByteArray();
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

function nameOf(err: unknown): string | undefined {
  return (err as { name?: string } | null)?.name;
}

/** A missing object (not a missing bucket, which is a configuration error). */
function isNotFound(err: unknown): boolean {
  const name = nameOf(err);
  if (name === 'NoSuchBucket' || name === 'NoSuchUpload') return false;
  return name === 'NoSuchKey' || name === 'NotFound' || statusOf(err) === 404;
}

function shortBody(key: string, op: string, expected: number, got: number): CcpError {
  return new CcpError('CCP_ERR_STORE_IO', `object store ${op} failed (body shorter than Content-Length)`, { retryable: true, detail: { key, op, expected, got } });
}

/**
 * S3 error codes that a later attempt can overcome although some come with a 4xx status: timeouts and truncated or
 * damaged bodies in transit, throttling, and NoSuchUpload (a CompleteMultipartUpload whose answer was lost and was
 * retried after the upload completed). Failing a batch for good on one of these would dead-letter good data.
 */
const TRANSIENT_ERRORS = new Set([
  'RequestTimeout', 'IncompleteBody', 'BadDigest', 'XAmzContentSHA256Mismatch', 'SlowDown', 'Throttling', 'ThrottlingException',
  'RequestLimitExceeded', 'InternalError', 'ServiceUnavailable', 'OperationAborted', 'NoSuchUpload',
]);

const ACCESS_ERRORS = new Set(['NoSuchBucket', 'AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidBucketName', 'PermanentRedirect']);

function ioError(err: unknown, op: string, key: string): CcpError {
  if (err instanceof CcpError) return err;
  const status = statusOf(err);
  const name = nameOf(err) ?? 'unknown';
  if (ACCESS_ERRORS.has(name) || status === 401 || status === 403) {
    // Every request would fail the same way until an operator fixes the configuration.
    return new CcpError('CCP_ERR_STORE_ACCESS', `object store ${op} refused (${name}${status !== undefined ? ` ${status}` : ''}): check the bucket, endpoint, region and credentials`, {
      retryable: false,
      cause: err,
      detail: { key, op, status },
    });
  }
  // No status: the request never got an answer (connection refused/reset, timeout) and may succeed later.
  const retryable = status === undefined || status >= 500 || status === 429 || status === 408 || TRANSIENT_ERRORS.has(name);
  return new CcpError('CCP_ERR_STORE_IO', `object store ${op} failed (${name}${status !== undefined ? ` ${status}` : ''})`, {
    retryable,
    cause: err,
    detail: { key, op, status },
  });
}
