import { z } from 'zod';
import { QUALITY_FILTER_NAMES } from '../quality/filters';
import { CcpError } from '../errors';
import { languageCodeProblem } from '../filter/language-codes';
import { registeredDomainOf } from '../url/registered-domain';

/** One configurable setting: its schema, the env var and CLI flag that set it, and what it means. */
interface Option<S extends z.ZodType> {
  schema: S;
  env: string;
  /** Long flag name without dashes, as commander stores it camel-cased under the option key. */
  flag: string;
  doc: string;
}
const opt = <S extends z.ZodType>(schema: S, env: string, flag: string, doc: string): Option<S> => ({ schema, env, flag, doc });

const csv = z.preprocess(
  (v) => (typeof v === 'string' ? v.split(',').map((s) => s.trim()).filter(Boolean) : v),
  z.array(z.string()),
);
/** A filter's value list: comma-separated, or `any` (also an empty flag value) for no filter (an empty list). */
const filterList = z.preprocess((v) => (typeof v === 'string' && /^\s*(any|\*)\s*$/i.test(v) ? '' : v), csv);
/** A yes/no setting: 1/true/yes/on or 0/false/no/off; anything else is refused (a typo must not flip it). */
const bool = z.preprocess((v) => {
  if (typeof v !== 'string') return v;
  const w = v.trim().toLowerCase();
  return /^(1|true|yes|on)$/.test(w) ? true : /^(0|false|no|off)$/.test(w) ? false : v;
}, z.boolean({ error: 'expected true/false (also 1/0, yes/no, on/off)' }));
const port = z.coerce.number().int().min(0).max(65535);
/** A list rule of the filter, set or not: an empty list would drop every record, so it is refused. */
const ruleList = csv.refine((l) => l.length > 0, 'expected at least one value (comma-separated); leave it unset for no rule');
/** A regex of the filter (JavaScript syntax, no flags): one that does not compile is refused with the engine's reason. */
const regex = z.string().min(1).superRefine((src, ctx) => {
  try {
    new RegExp(src);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a valid JavaScript regular expression (${(err as Error).message})` });
  }
});
/**
 * Registered domains of a domain rule, lower-cased, deduplicated and sorted (the dataset's filter fingerprint does
 * not depend on their order). The rule compares each record's registered domain, so a host (`www.example.com`), a
 * URL or a public suffix could never match: refused, naming the domain to write instead.
 */
const domainRuleList = ruleList
  .transform((l) => [...new Set(l.map((d) => d.toLowerCase().replace(/\.$/, '')))].sort())
  .superRefine((l, ctx) => {
    for (const d of l) {
      const rd = registeredDomainOf(d);
      if (rd === d) continue;
      ctx.addIssue({
        code: 'custom',
        message: rd === null ? `"${d}" is not a registered domain (a public suffix, or not a host name)` : `"${d}" is not a registered domain: the rule compares registered domains, write "${rd}"`,
      });
    }
  });
/** `s3://bucket[/prefix]`: the bucket rules of S3, prefix segments of the store key alphabet. */
const S3_SPEC = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/([A-Za-z0-9._=-]+\/)*([A-Za-z0-9._=-]+)?)?$/;

/**
 * Every setting of every service, in one table. Precedence: CLI flag, then environment variable, then default.
 * Nothing else in ccpipe reads process.env.
 */
export const OPTIONS = {
  data: opt(
    z.string().min(1).default('./data').refine((v) => !/^s3:\/\//i.test(v) || S3_SPEC.test(v), 's3:// location must be s3://bucket or s3://bucket/prefix (lower-case bucket name; prefix segments of [A-Za-z0-9._=-])'),
    'CCPIPE_DATA',
    'data',
    'data store: a directory, or s3://bucket/prefix on an S3-compatible store (see docs/s3.md)',
  ),
  s3Endpoint: opt(z.string().url().optional(), 'CCPIPE_S3_ENDPOINT', 's3-endpoint', 'S3-compatible endpoint, e.g. http://127.0.0.1:9000 (unset = AWS); credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY'),
  s3Region: opt(z.string().min(1).default('us-east-1'), 'CCPIPE_S3_REGION', 's3-region', 'S3 region (most S3-compatible stores accept any)'),
  s3ForcePathStyle: opt(bool.default(true), 'CCPIPE_S3_FORCE_PATH_STYLE', 's3-force-path-style', 'path-style S3 requests (endpoint/bucket/key) instead of bucket.endpoint/key'),
  s3MultipartThreshold: opt(z.coerce.number().int().min(5 * 1024 * 1024).default(16 * 1024 * 1024), 'CCPIPE_S3_MULTIPART_THRESHOLD', 's3-multipart-threshold', 'objects larger than this many bytes are uploaded in 8 MiB parts'),
  s3MaxAttempts: opt(z.coerce.number().int().min(1).max(20).default(5), 'CCPIPE_S3_MAX_ATTEMPTS', 's3-max-attempts', 'attempts per S3 request (SDK standard retry: 5xx, 503 SlowDown, throttling, network errors)'),
  logLevel: opt(z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'), 'LOG_LEVEL', 'log-level', 'pino log level'),
  rabbitmqUrl: opt(
    // the message never repeats the URL: it carries the password
    z.string().url().default('amqp://guest:guest@127.0.0.1:5672').superRefine((v, ctx) => {
      const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(v)?.[1]?.toLowerCase();
      if (scheme !== 'amqp' && scheme !== 'amqps') {
        ctx.addIssue({ code: 'custom', message: `must be an amqp:// or amqps:// URL (RabbitMQ's AMQP port, 5672 by default), not ${scheme ?? 'this'}://` });
      }
    }),
    'RABBITMQ_URL',
    'rabbitmq',
    'AMQP URL of the broker (amqp:// or amqps://)',
  ),
  brokerGiveUpMs: opt(
    z.coerce.number().int().min(0).default(120_000),
    'CCPIPE_BROKER_GIVE_UP_MS',
    'broker-give-up-ms',
    'stop (exit 1, saying why) once the broker has refused the login or the connection this long without a break; 0 = keep trying',
  ),
  queuePrefix: opt(z.string().regex(/^[A-Za-z0-9._-]+$/).default('ccpipe'), 'CCPIPE_QUEUE_PREFIX', 'queue-prefix', 'prefix of queue names (<prefix>.batches, <prefix>.batches.dlq)'),
  baseUrl: opt(z.string().url().default('https://data.commoncrawl.org'), 'CC_BASE_URL', 'base-url', 'where cluster.idx, CDX blocks and WARC files are read from'),
  crawl: opt(z.string().regex(/^[A-Za-z0-9._-]+$/).optional(), 'CCPIPE_CRAWL', 'crawl', 'crawl name, e.g. CC-MAIN-2024-30'),
  dataset: opt(z.string().regex(/^[A-Za-z0-9._-]+$/).optional(), 'CCPIPE_DATASET', 'dataset', 'dataset name (default: the crawl name)'),
  clusterIdxDir: opt(z.string().default('./cluster-idx'), 'CCPIPE_CLUSTER_IDX_DIR', 'cluster-idx-dir', 'local copies of cluster.idx: <dir>/<crawl>/cluster.idx'),
  metricsPort: opt(port.optional(), 'CCPIPE_METRICS_PORT', 'metrics-port', '/metrics port (batcher 9000, worker 9001, merger service 9002 by default; a one-off merge and ccpipe run serve only when it is set; 0 = any free port)'),
  metricsHost: opt(z.string().default('0.0.0.0'), 'CCPIPE_METRICS_HOST', 'metrics-host', '/metrics bind address'),
  metricsFinalScrapeMs: opt(
    z.coerce.number().int().min(0).default(0),
    'CCPIPE_METRICS_FINAL_SCRAPE_MS',
    'metrics-final-scrape-ms',
    'batcher: once done, keep /metrics up until one scrape has read the final values, at most this long; 0 = exit at once (compose sets 60000)',
  ),
  batchSize: opt(z.coerce.number().int().min(1).max(10_000).default(500), 'CCPIPE_BATCH_SIZE', 'batch-size', 'records per published batch'),
  batcherMode: opt(
    z.enum(['auto', 'bulk', 'ranges']).default('auto'),
    'CCPIPE_BATCHER_MODE',
    'mode',
    'ranges: a batch of record ranges per CDX block, a request per record; bulk: a job per WARC file, read whole in one request; auto: ranges for --domains and selective filters, bulk otherwise (from a sample of the CDX; docs/bulk.md)',
  ),
  spillDir: opt(z.string().optional(), 'CCPIPE_SPILL_DIR', 'spill-dir', 'bulk mode: where the batcher groups kept records by WARC file on local disk (default: the system temp dir)'),
  maxBlocks: opt(z.coerce.number().int().min(1).optional(), 'CCPIPE_MAX_BLOCKS', 'max-blocks', 'stop after this many CDX blocks (sampling)'),
  domainsFile: opt(z.string().optional(), 'CCPIPE_DOMAINS_FILE', 'domains', 'file of registered domains or hosts to target, one per line'),
  filterStatus: opt(filterList.default(['200']), 'CCPIPE_FILTER_STATUS', 'status', "HTTP statuses to keep (comma-separated; 'any' = every status)"),
  filterLanguages: opt(
    // a code no record carries would keep nothing, silently, and lock the dataset to that filter: refuse it here
    filterList.default(['eng']).superRefine((codes, ctx) => {
      for (const c of codes) {
        const problem = languageCodeProblem(c);
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
      }
    }),
    'CCPIPE_FILTER_LANGUAGES',
    'languages',
    "languages to keep (ISO 639-3 codes such as eng, deu, comma-separated; 'any' = every language, with or without a detected one)",
  ),
  filterLanguageMode: opt(z.enum(['contains', 'primary']).default('contains'), 'CCPIPE_FILTER_LANGUAGE_MODE', 'language-mode', 'match a language anywhere in the list, or only as primary'),
  filterMimes: opt(ruleList.optional(), 'CCPIPE_FILTER_MIMES', 'mimes', "mime types to keep, as the server declared them (the CDX 'mime'; comma-separated)"),
  filterMimesDetected: opt(ruleList.optional(), 'CCPIPE_FILTER_MIMES_DETECTED', 'mimes-detected', "mime types to keep, as Common Crawl detected them from the content (the CDX 'mime-detected'; comma-separated)"),
  filterUrlRegex: opt(regex.optional(), 'CCPIPE_FILTER_URL_REGEX', 'url-regex', 'keep only URLs matching this JavaScript regular expression'),
  filterUrlRegexExclude: opt(regex.optional(), 'CCPIPE_FILTER_URL_REGEX_EXCLUDE', 'url-regex-exclude', 'drop URLs matching this JavaScript regular expression'),
  filterDomainsAllow: opt(
    domainRuleList.optional(),
    'CCPIPE_FILTER_DOMAINS_ALLOW',
    'domains-allow',
    'keep only records of these registered domains (comma-separated; every planned block is still read, --domains FILE reads only the blocks that can hold them)',
  ),
  filterDomainsDeny: opt(domainRuleList.optional(), 'CCPIPE_FILTER_DOMAINS_DENY', 'domains-deny', 'drop records of these registered domains (comma-separated)'),
  publishConfirmTimeoutMs: opt(z.coerce.number().int().min(100).default(30_000), 'CCPIPE_CONFIRM_TIMEOUT_MS', 'confirm-timeout-ms', 'publisher confirm timeout'),
  prefetch: opt(z.coerce.number().int().min(1).max(1000).default(2), 'CCPIPE_PREFETCH', 'prefetch', 'batches a worker holds unacknowledged'),
  concurrency: opt(z.coerce.number().int().min(1).max(512).default(16), 'CCPIPE_CONCURRENCY', 'concurrency', 'records of a batch fetched at once (a worker holds up to --prefetch batches: prefetch × concurrency in flight, within --connections)'),
  extractThreads: opt(z.coerce.number().int().min(1).max(64).optional(), 'CCPIPE_EXTRACT_THREADS', 'extract-threads', 'extraction worker threads (default: CPU count)'),
  extractTimeoutMs: opt(z.coerce.number().int().min(10).default(10_000), 'CCPIPE_EXTRACT_TIMEOUT_MS', 'extract-timeout-ms', 'per-document extraction time limit'),
  dom: opt(z.enum(['linkedom', 'jsdom']).default('linkedom'), 'CCPIPE_DOM', 'dom', 'DOM implementation under Readability'),
  qualityFilters: opt(
    z.string().default('').transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)),
    'CCPIPE_QUALITY_FILTERS',
    'quality-filters',
    `quality filters run on extracted text (comma-separated: ${QUALITY_FILTER_NAMES.join(', ')}, or gopher, c4, fineweb, all; default none; docs/extraction.md)`,
  ),
  qualityThresholds: opt(
    z.string().default(''),
    'CCPIPE_QUALITY_THRESHOLDS',
    'quality-thresholds',
    "quality filter thresholds, name=value separated by ';' (min-words=100;text-languages=eng,deu); a threshold turns its filter on",
  ),
  keepDropped: opt(bool.default(false), 'CCPIPE_KEEP_DROPPED', 'keep-dropped', 'keep documents a quality filter drops as rows with dropped_by (to see what a filter removes)'),
  includeText: opt(bool.default(true), 'CCPIPE_INCLUDE_TEXT', 'include-text', 'store extracted text in Parquet parts'),
  mergeDistribute: opt(
    bool.default(false),
    'CCPIPE_MERGE_DISTRIBUTE',
    'distribute',
    'merge: write the lake through merge tasks on the <prefix>.merge-tasks queue, run by ccpipe merge-worker processes (docs/merge-tasks.md); the version is the same as without',
  ),
  extract: opt(
    bool.default(true),
    'CCPIPE_EXTRACT',
    'extract',
    'extract HTML pages (title, text, outlinks, language); false: rows keep URL keys, status, size and WARC location only, and no page is decoded or parsed (the fastest index of a crawl\'s URLs)',
  ),
  parquetEngine: opt(z.enum(['duckdb', 'parquet-wasm']).default('duckdb'), 'CCPIPE_PARQUET_ENGINE', 'parquet-engine', 'Parquet writer (duckdb: smaller files and faster here, see docs/parquet.md)'),
  rowGroupSize: opt(z.coerce.number().int().min(1).default(32_768), 'CCPIPE_ROW_GROUP_SIZE', 'row-group-size', 'rows per Parquet row group of worker parts'),
  lakeRowGroupSize: opt(z.coerce.number().int().min(1).default(8_192), 'CCPIPE_LAKE_ROW_GROUP_SIZE', 'lake-row-group-size', 'rows per row group of merged lake files, rounded up to a multiple of 2048 (a cold API page decodes one; docs/index-format.md)'),
  apiPort: opt(port.default(8080), 'CCPIPE_API_PORT', 'api-port', 'API port (0 = any free port)'),
  apiHost: opt(z.string().default('0.0.0.0'), 'CCPIPE_API_HOST', 'api-host', 'API bind address'),
  aclFile: opt(z.string().optional(), 'CCPIPE_API_ACL_FILE', 'acl-file', 'dataset ACL: JSON of token → allowed datasets (unset = open)'),
  apiIndexReads: opt(z.enum(['resident', 'files']).default('resident'), 'CCPIPE_API_INDEX_READS', 'index-reads', "API's domain index: in memory, or read in place from its shard files (docs/api.md)"),
  apiIndexCacheDir: opt(z.string().optional(), 'CCPIPE_API_INDEX_CACHE_DIR', 'index-cache-dir', 'with --index-reads files over S3: where shard files are staged (default: the OS temp dir)'),
  apiSearchThreads: opt(z.coerce.number().int().min(1).max(64).default(1), 'CCPIPE_API_SEARCH_THREADS', 'search-threads', 'worker threads running full-text searches (/v1/search; docs/search.md)'),
  apiSearchTimeLimit: opt(z.coerce.number().int().min(10).max(60_000).default(1000), 'CCPIPE_API_SEARCH_TIME_LIMIT', 'search-time-limit', 'ms a full-text search may run before the API answers 503 + Retry-After'),
  mergeCacheDir: opt(z.string().optional(), 'CCPIPE_MERGE_CACHE_DIR', 'merge-cache-dir', 'with an S3 data store: where the merger keeps the lake and index files between merges, so a merge downloads only the new batch parts (unset: every merge downloads the whole lake)'),
  connections: opt(z.coerce.number().int().min(1).max(1024).default(32), 'CCPIPE_CONNECTIONS', 'connections', 'HTTP connections per origin'),
} as const;

type Options = typeof OPTIONS;
/** The resolved configuration. */
export type Config = { [K in keyof Options]: z.output<Options[K]['schema']> };
export type ConfigKey = keyof Options;

/** The configuration could not be loaded; `problems` lists every one, each naming its flag and env var. */
export class ConfigError extends CcpError {
  readonly problems: string[];
  constructor(problems: string[]) {
    super('CCP_ERR_CONFIG', `invalid configuration:\n  - ${problems.join('\n  - ')}`, { retryable: false });
    this.problems = problems;
  }
}

/**
 * Resolves the configuration from CLI flags (camel-cased keys as commander gives them) over environment variables
 * over defaults. Unknown env vars are ignored. Throws {@link ConfigError} listing every invalid value at once.
 * Pure: the caller passes `process.env` in.
 */
export function loadConfig(env: Record<string, string | undefined>, flags: Partial<Record<ConfigKey, unknown>> = {}): Config {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [key, o] of Object.entries(OPTIONS) as [ConfigKey, Option<z.ZodType>][]) {
    // an empty env var is unset (compose passes `${VAR:-}` through), an empty flag value was typed on purpose
    const fromFlag = flags[key];
    const fromEnv = env[o.env];
    const parsed = o.schema.safeParse(fromFlag !== undefined ? fromFlag : fromEnv === '' ? undefined : fromEnv);
    if (parsed.success) out[key] = parsed.data;
    else problems.push(`--${o.flag} / ${o.env}: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return out as Config;
}

/** The options table as rows for help text and docs: key, flag, env, doc, and the default when there is one. */
export function describeOptions(): { key: ConfigKey; flag: string; env: string; doc: string; default?: string }[] {
  return (Object.entries(OPTIONS) as [ConfigKey, Option<z.ZodType>][]).map(([key, o]) => {
    const d = o.schema.safeParse(undefined);
    return { key, flag: o.flag, env: o.env, doc: o.doc, ...(d.success && d.data !== undefined && { default: String(d.data) }) };
  });
}
