import { resolve } from 'node:path';
import { CcpError, type ObjectStore } from '@ccpipe/core';
import { FsObjectStore } from './fs-object-store';
import { S3ObjectStore, isBucketName } from './s3-object-store';
import { validateKey } from './store-key';

/** Where a data store spec points: a local directory or a bucket and key prefix. */
export type StoreLocation = { kind: 'fs'; root: string } | { kind: 's3'; bucket: string; prefix: string };

/** The S3 settings of the config table (`Config` satisfies this); ignored for a local directory. */
export interface OpenObjectStoreOptions {
  s3Endpoint?: string | undefined;
  s3Region?: string | undefined;
  s3ForcePathStyle?: boolean | undefined;
  s3MultipartThreshold?: number | undefined;
  s3MaxAttempts?: number | undefined;
}

/** An opened data store; `close()` releases its connections (idempotent, a no-op for a directory). */
export type OpenedObjectStore = ObjectStore & { close(): Promise<void> };

/**
 * Parses `--data`: `s3://bucket` or `s3://bucket/prefix/…` names a bucket and key prefix, anything else is a
 * local directory (resolved against the working directory).
 * @throws CcpError CCP_ERR_CONFIG for an `s3://` spec with a bad bucket name or prefix
 */
export function parseStoreSpec(spec: string): StoreLocation {
  if (!/^s3:\/\//i.test(spec)) return { kind: 'fs', root: resolve(spec) };
  const rest = spec.slice('s3://'.length);
  const cut = rest.indexOf('/');
  const bucket = cut < 0 ? rest : rest.slice(0, cut);
  const prefix = cut < 0 ? '' : rest.slice(cut + 1).replace(/\/+$/, '');
  if (!isBucketName(bucket)) throw new CcpError('CCP_ERR_CONFIG', 'invalid S3 bucket name in the data store location', { detail: { spec } });
  if (prefix !== '') {
    try {
      validateKey(prefix);
    } catch (err) {
      throw new CcpError('CCP_ERR_CONFIG', 'invalid key prefix in the data store location (segments of [A-Za-z0-9._=-])', { cause: err, detail: { spec } });
    }
  }
  return { kind: 's3', bucket, prefix };
}

/** The local directory of a spec, or undefined when it names a bucket. @throws like {@link parseStoreSpec} */
export function localStoreDir(spec: string): string | undefined {
  const loc = parseStoreSpec(spec);
  return loc.kind === 'fs' ? loc.root : undefined;
}

/**
 * Opens the data store `spec` names: {@link FsObjectStore} for a directory, {@link S3ObjectStore} for
 * `s3://bucket/prefix` with the S3 settings of `opts` (credentials come from the SDK's default chain:
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, or an instance role). Makes no request.
 * @throws CcpError CCP_ERR_CONFIG for a bad `s3://` spec
 */
export function openObjectStore(spec: string, opts: OpenObjectStoreOptions = {}): OpenedObjectStore {
  const loc = parseStoreSpec(spec);
  if (loc.kind === 'fs') return new FsObjectStore({ root: loc.root });
  return new S3ObjectStore({
    bucket: loc.bucket,
    prefix: loc.prefix,
    ...(opts.s3Endpoint !== undefined && { endpoint: opts.s3Endpoint }),
    ...(opts.s3Region !== undefined && { region: opts.s3Region }),
    ...(opts.s3ForcePathStyle !== undefined && { forcePathStyle: opts.s3ForcePathStyle }),
    ...(opts.s3MultipartThreshold !== undefined && { multipartThreshold: opts.s3MultipartThreshold }),
    ...(opts.s3MaxAttempts !== undefined && { maxAttempts: opts.s3MaxAttempts }),
  });
}
