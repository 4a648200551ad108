import * as path from 'node:path';
import * as os from 'node:os';
import { createServer } from 'node:net';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { CcpError, type Config } from '@ccpipe/core';
import { localStoreDir, openObjectStore, startMetricsServer, writeParquetPart, type Logger } from '@ccpipe/adapters';
import { runImport, type ImportSummary } from '@ccpipe/import';
import { ingestStatusProvider } from '@ccpipe/api';
import { serveMirror } from '@ccpipe/mirror';
import { ingestCrawls, type CrawlIngest } from './ingest';
import { keptDeadLetters } from './processed-queue';
import { emptyCounters, runProgress } from './run-progress';
import { ensureSampleMirror } from './sample/sample-mirror';
import { mergeAndServe } from './serve-index';

/** What `ccpipe run` was asked to do. */
export interface EmbeddedOptions {
  config: Config;
  /** Crawls to ingest; null = the bundled sample crawls, served by the built-in mirror. */
  crawls: string[] | null;
  /** API port (0 = a free one) and bind address. */
  port: number;
  host: string;
  /** Stop after the merge instead of serving until a signal (tests, scripts). */
  exitAfterMerge: boolean;
  /** Files to import into a dataset (`--import`, `--dataset`) after the crawls and before the merge (docs/import.md). */
  imports?: { files: string[]; dataset: string } | null;
}

/** Where the run writes and how it learns to stop. */
export interface EmbeddedIo {
  /** Human-readable lines (the API address, example queries). */
  print(line: string): void;
  log: Logger;
  /** Draw a progress bar (stderr is a TTY) instead of periodic log lines. */
  tty: boolean;
  /** Fires on SIGINT/SIGTERM: stop ingesting (in-flight batches finish), or stop serving. */
  signal: AbortSignal;
}

/**
 * `ccpipe run`: batcher, worker, merger and API in one process over an in-process queue. With no crawls it first
 * builds (once, under `<data>/sample-mirror`) and serves the bundled sample crawl. Ingests every crawl to completion,
 * merges, serves the API and prints its address with example queries, then serves until `io.signal` fires (or
 * returns at once with `exitAfterMerge`) and closes everything in reverse order. Re-running over the same data
 * directory skips ingested crawls, resumes interrupted ones at their checkpoint and merges again.
 * Resolves to the exit code: 0 done, 1 failed (logged), 130 interrupted before the API was up.
 */
export async function runEmbedded(opts: EmbeddedOptions, io: EmbeddedIo): Promise<number> {
  const { config, log } = { config: opts.config, log: io.log };
  const closers: (() => Promise<unknown>)[] = [];
  const counters = emptyCounters();
  let progress: { update(): void; stop(): void } | null = null;
  try {
    // A local directory, or s3://bucket/prefix: then the merge stages its inputs and the API reads lake row groups
    // with ranged GETs; the bundled sample mirror is built in a local cache directory instead.
    // the API's port is taken only after ingest and merge: a port already in use fails now, not after a long ingest
    if (opts.port !== 0) await assertPortFree(opts.port, opts.host);
    // one registry for the whole run: the batchers' and the worker's metrics from the start, the API's once it serves
    // (on its own /metrics); with --metrics-port also served on their own port from the start, ingest included
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    if (config.metricsPort !== undefined) {
      const metricsPort = config.metricsPort;
      const metrics = await startMetricsServer(registry, { host: config.metricsHost, port: metricsPort }).catch((err: NodeJS.ErrnoException) => {
        throw new CcpError('CCP_ERR_CONFIG', `the metrics port ${metricsPort} on ${config.metricsHost} cannot be used (${err.code ?? err.message}): pick another with --metrics-port`, { cause: err });
      });
      closers.push(() => metrics.close());
      if (io.tty) io.print(`Metrics on http://${config.metricsHost}:${metrics.port}/metrics`);
      else log.info({ port: metrics.port }, 'metrics listening');
    }
    const dataDir = localStoreDir(config.data);
    const store = openObjectStore(config.data, config);
    closers.push(() => store.close());
    let baseUrl = config.baseUrl;
    let crawls = opts.crawls;
    if (crawls === null) {
      const t0 = Date.now();
      // With an S3 store the sample mirror goes to the user's own cache directory, not a shared, predictable /tmp path
      // another local user could prepare first.
      const cacheRoot = process.env['XDG_CACHE_HOME'] || path.join(os.homedir(), '.cache');
      const sampleDir = dataDir === undefined ? path.join(cacheRoot, 'ccpipe', 'sample-mirror') : path.join(dataDir, 'sample-mirror');
      if (io.tty) io.print(`Preparing the bundled sample crawl (built once into ${sampleDir})…`);
      const sample = await ensureSampleMirror(sampleDir);
      const mirror = await serveMirror({ dir: sample.dir, port: 0 });
      closers.push(() => mirror.close());
      baseUrl = mirror.url;
      crawls = sample.crawls;
      log.info({ crawls, built: sample.built, ms: Date.now() - t0, mirror: mirror.url }, 'sample mirror ready');
    }

    progress = runProgress(counters, { tty: io.tty, log });
    const ingested = crawls.length === 0 ? [] : await ingestCrawls({ config, crawls, baseUrl, store, log, counters, registry, onProgress: () => progress?.update(), signal: io.signal });
    progress.stop();
    log.info({ ...counters }, 'ingest done');
    const imported = opts.imports == null ? null : await runImport(
      { files: opts.imports.files, dataset: opts.imports.dataset, columns: { url: 'url', ts: 'ts', status: 'status', title: 'title', text: 'text' }, explicit: new Set(), includeText: config.includeText },
      { store, log, writePart: (rows) => writeParquetPart(rows, { engine: config.parquetEngine, includeText: config.includeText, rowGroupSize: config.rowGroupSize }) },
    );
    if (imported !== null && imported.outcome !== 'imported') {
      throw new CcpError('CCP_ERR_IMPORT_REJECTS', `the import rejected ${imported.rejects} rows, over its limit of ${imported.maxRejects} (1%): see ccpipe import --max-rejects`);
    }

    const served = await mergeAndServe({
      store, ...(dataDir === undefined ? {} : { dataDir }), rowGroupSize: config.lakeRowGroupSize, port: opts.port, host: opts.host, registry, log,
      // /v1/status: the datasets' checkpoints against the version served, as `ccpipe api` shows them (whole-dataset
      // totals, also after a re-run that had nothing left to do), plus what this process did
      status: ingestStatusProvider(store, () => ({ thisRun: { ...counters } })),
    });
    closers.push(() => served.close());
    // a signal during the merge (which runs to its end: a merge is all or nothing) stops the run before it serves
    if (io.signal.aborted) throw new CcpError('CCP_ERR_ABORTED', 'interrupted before the API was up');
    log.info({ url: served.url, port: served.port, version: served.merge.version }, 'api listening');

    // the sample's bookshop, or the largest domain of the first crawl's dataset in the version served
    const firstDataset = ingested[0]?.datasetId ?? imported?.datasetId ?? 1;
    const domain = opts.crawls === null && imported === null ? SAMPLE_DOMAIN : await served.largestDomain(firstDataset);
    for (const line of summaryLines(ingested, imported, served.url, served.merge.version, domain)) io.print(line);
    const kept = (await keptDeadLetters(store)).length;
    if (kept > 0) io.print(`Note: ${kept} batch(es) could not be processed; they are kept under deadletters/ in the data directory and tried again by the next run.`);
    if (opts.exitAfterMerge) return 0;
    io.print('Serving until Ctrl-C.');
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    log.info('api closing');
    return 0;
  } catch (err) {
    progress?.stop();
    if (io.signal.aborted) {
      log.warn('interrupted; a re-run with the same --data resumes');
      return 130;
    }
    log.error({ err }, 'run failed');
    return 1;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
}

/**
 * Resolves when `port` can be listened on at `host` (it is then released again), rejects with CcpError
 * CCP_ERR_CONFIG naming the port when it is in use or not allowed.
 */
export async function assertPortFree(port: number, host: string): Promise<void> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(new CcpError('CCP_ERR_CONFIG', `the API port ${port} on ${host} cannot be used (${err.code ?? err.message}): pick another with --port`, { cause: err })),
    );
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}

/** The bundled sample's domain shown in example queries. */
const SAMPLE_DOMAIN = 'maple-street-books.com';

/** ` (CODE: n, …)` by count, or nothing when no record failed. */
function failuresText(failures: Record<string, number>): string {
  const parts = Object.entries(failures).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([k, n]) => `${k}: ${n}`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

function summaryLines(ingested: CrawlIngest[], imported: ImportSummary | null, url: string, version: string | null, domain: string | null): string[] {
  const lines = ['', `ccpipe run: ${ingested.length} crawl(s) ingested${imported === null ? '' : ', 1 import'}, index version ${version ?? '(none: nothing kept)'}`];
  if (imported !== null) {
    const by = Object.entries(imported.rejectsByReason).map(([r, n]) => `${r} ${n}`).join(', ');
    lines.push(`  ${imported.files.map((f) => f.file).join(', ')} → dataset ${imported.datasetId} (${imported.dataset}): ${imported.rows} rows imported, ${imported.rejects} rejected${by === '' ? '' : ` (${by})`}`);
  }
  for (const c of ingested) {
    const s = c.summary;
    // a resumed crawl's summary counts this run's blocks only: say so
    const resumed = c.resumedAt > 0 ? `, resumed at block ${c.resumedAt}, this run` : '';
    lines.push(`  ${c.crawl} → dataset ${c.datasetId} (${c.dataset}): ${c.planned} blocks${s ? `${resumed}: ${s.records} CDX records, ${s.kept} kept, ${s.batches} batches${s.failedBlocks.length > 0 ? `, ${s.failedBlocks.length} block(s) skipped (unreadable)` : ''}` : ', already ingested'}`);
    // kept is what the filter let through; say what became of it, and why records failed
    if (c.written.rows > 0 || c.written.failed > 0) lines.push(`    ${c.written.rows} indexed, ${c.written.failed} failed${failuresText(c.written.failures)}`);
  }
  lines.push(`API listening on ${url}`, `Explorer: ${url}/`, 'Try:', `  curl -s ${url}/v1/datasets`);
  if (domain !== null) {
    const first = ingested[0]?.datasetId ?? imported?.datasetId ?? 1;
    lines.push(`  curl -s ${url}/v1/domain/${domain}`, `  curl -s '${url}/v1/domain/${domain}/datasets/${first}/urls?limit=5'`);
    lines.push(`  curl -s '${url}/v1/url?url=${encodeURIComponent(`https://www.${domain}/`)}'`);
    lines.push(`  curl -s '${url}/v1/url/links?url=${encodeURIComponent(`https://www.${domain}/`)}&direction=in'`);
    lines.push(`  curl -s '${url}/v1/search?q=${encodeURIComponent(domain.split('.')[0]!.split('-').pop()!)}&limit=3'`);
  }
  lines.push(`  curl -s ${url}/v1/status`);
  return lines;
}
