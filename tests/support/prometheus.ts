import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's prometheus package (`.ci/run` installs it). */
export const PROMETHEUS_BIN = '/usr/bin/prometheus';

/** True when the Prometheus server binary is installed. */
export const hasPrometheus = (): boolean => existsSync(PROMETHEUS_BIN);

/** A port nothing listens on right now (bound on 127.0.0.1, then released). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The job names of a prometheus.yml (its `  - job_name: x` lines), in order. */
export function jobNamesOf(prometheusYml: string): string[] {
  return [...prometheusYml.matchAll(/^ {2}- job_name: (\S+)$/gm)].map((m) => m[1]!);
}

/**
 * A Prometheus config for local processes made from the repository's prometheus.yml: the same jobs with their own
 * settings (metrics_path, params), each job's service discovery (`static_configs`, `dns_sd_configs`,
 * `file_sd_configs`) replaced by the static `targets` given for it, and `scrapeInterval` everywhere. Line-based, for
 * the YAML subset prometheus.yml uses (no YAML library is a dependency).
 * @throws Error when the jobs of the file and the keys of `targets` differ, so a job added to prometheus.yml must be
 * given a local target too.
 */
export function localScrapeConfig(prometheusYml: string, targets: Record<string, string[]>, scrapeInterval = '1s'): string {
  const lines = prometheusYml.split('\n');
  const start = lines.indexOf('scrape_configs:');
  if (start < 0) throw new Error('prometheus.yml has no scrape_configs');
  const jobs: { name: string; body: string[] }[] = [];
  for (const l of lines.slice(start + 1)) {
    const m = /^ {2}- job_name: (\S+)$/.exec(l);
    if (m) {
      jobs.push({ name: m[1]!, body: [] });
      continue;
    }
    if (l.trim() === '' || l.trimStart().startsWith('#')) continue;
    if (!l.startsWith('    ') || jobs.length === 0) throw new Error(`prometheus.yml: unexpected line after scrape_configs: ${l}`);
    jobs.at(-1)!.body.push(l);
  }
  const names = jobs.map((j) => j.name);
  const missing = names.filter((n) => !(n in targets));
  const extra = Object.keys(targets).filter((n) => !names.includes(n));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(`prometheus.yml jobs and local targets differ: no target for [${missing.join(', ')}], no job for [${extra.join(', ')}]`);
  }
  const out = ['global:', `  scrape_interval: ${scrapeInterval}`, `  scrape_timeout: ${scrapeInterval}`, `  evaluation_interval: ${scrapeInterval}`, '', 'scrape_configs:'];
  for (const job of jobs) {
    out.push(`  - job_name: ${job.name}`);
    let skipping = false;
    for (const l of job.body) {
      if (/^ {4}\S/.test(l)) skipping = /^ {4}(static_configs|dns_sd_configs|file_sd_configs|scrape_interval|scrape_timeout):/.test(l);
      if (!skipping) out.push(l);
    }
    out.push('    static_configs:', `      - targets: ${JSON.stringify(targets[job.name])}`);
  }
  return `${out.join('\n')}\n`;
}

/** One target as `/api/v1/targets` reports it. */
export interface ActiveTarget {
  labels: Record<string, string>;
  scrapePool: string;
  scrapeUrl: string;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
}

/** One sample of an instant vector from `/api/v1/query`. */
export interface Sample {
  metric: Record<string, string>;
  value: number;
}

/** A Prometheus server started by a test. */
export interface LocalPrometheus {
  url: string;
  /** Every active target. */
  targets(): Promise<ActiveTarget[]>;
  /** An instant query; throws on a query error or a result that is not a vector. */
  query(expr: string): Promise<Sample[]>;
  /** What it printed (for failure messages). */
  output(): string;
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and deletes its storage; idempotent. */
  close(): Promise<void>;
}

/**
 * Starts `/usr/bin/prometheus` on a free 127.0.0.1 port with `config` (YAML text) and a temporary TSDB, and waits
 * until `/-/ready` answers.
 * @throws Error with its output when it exits or is not ready within `readyTimeoutMs`.
 */
export async function startPrometheus(config: string, readyTimeoutMs = 60_000): Promise<LocalPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'ccpipe-prometheus-'));
  const configFile = join(dir, 'prometheus.yml');
  await writeFile(configFile, config);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    PROMETHEUS_BIN,
    [`--config.file=${configFile}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const out: string[] = [];
  child.stdout!.setEncoding('utf8').on('data', (c: string) => out.push(c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => out.push(c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    })());
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  try {
    for (const deadline = Date.now() + readyTimeoutMs; ; await new Promise((r) => setTimeout(r, 200))) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`prometheus exited: ${out.join('')}`);
      if (await fetch(`${url}/-/ready`).then((r) => r.ok, () => false)) break;
      if (Date.now() > deadline) throw new Error(`prometheus not ready: ${out.join('')}`);
    }
  } catch (err) {
    await close();
    throw err;
  }
  return {
    url,
    targets: async () => (await api<{ activeTargets: ActiveTarget[] }>('/api/v1/targets')).activeTargets,
    query: async (expr) => {
      const data = await api<{ resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] }>(
        `/api/v1/query?query=${encodeURIComponent(expr)}`,
      );
      if (data.resultType !== 'vector') throw new Error(`prometheus: ${expr} is a ${data.resultType}, not a vector`);
      return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    output: () => out.join(''),
    close,
  };
}
