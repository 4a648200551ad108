// Validates the compose topology without a Docker engine: every name the operations files use (env vars, metric
// names, queue names, ports, CLI commands, mounted paths) must be one the code really has. No YAML library is a
// declared dependency, so the YAML files are checked with line-based parsing of the small subset they use.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { describeOptions, loadConfig } from '@ccpipe/core';
import { mergeTaskTopologyNames, topologyNames, workQueueArguments, deadLetterQueueArguments } from '@ccpipe/adapters';
import { batcherMetrics } from '../packages/batcher/src/metrics';
import { workerMetrics } from '../packages/worker/src/metrics';
import { apiMetrics, indexMetrics, lakeReaderMetrics, searchMetrics } from '../packages/api/src/metrics';
import { mergeMetrics } from '../packages/cli/src/merge/merge-metrics';
import { MERGER_METRICS_PORT } from '../packages/cli/src/merge/merger-main';
import { MERGE_WORKER_MEMORY_LIMIT, MERGE_WORKER_METRICS_PORT, mergeWorkerMetrics } from '../packages/cli/src/commands/merge-worker';
import { WORKER_DRAIN_MS } from '../packages/worker/src/main';
import { buildProgram } from '../packages/cli/src/main';
import { REPO_ROOT } from './support/corpus';

const read = (p: string): string => readFileSync(join(REPO_ROOT, p), 'utf8');
const compose = read('docker-compose.yml');
const prometheus = read('prometheus.yml');

/** Lines of one top-level-under-`services:` block (2-space indented key) or of an `x-` extension block. */
function block(text: string, name: string, indent: string): string[] {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l === `${indent}${name}:` || l.startsWith(`${indent}${name}: `));
  if (start < 0) throw new Error(`no block ${name}`);
  const out: string[] = [];
  for (const l of lines.slice(start + 1)) {
    if (l.trim() !== '' && !l.startsWith(`${indent} `) && !l.trimStart().startsWith('#')) break;
    out.push(l);
  }
  return out;
}

/** Resolves compose interpolation as `docker compose` would with nothing set: `${X:-d}` → d, `${X:?msg}` → sample. */
function interpolate(v: string, sample: Record<string, string>): string {
  return v.replace(/\$\{([A-Z0-9_]+)(?::?([-?])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) =>
    op === '-' ? (arg ?? '') : (sample[name] ?? ''),
  );
}

/** A scalar as YAML reads it: a double-quoted string's content, or a plain one without its trailing ` # comment`. */
function yamlScalar(v: string): string {
  const q = /^"(.*)"\s*(?:#.*)?$/.exec(v);
  return q ? q[1]! : v.replace(/\s+#.*$/, '');
}

/** The environment a compose service gets: the `x-ccpipe-env` anchor when merged in, then its own keys. */
function serviceEnv(service: string): Record<string, string> {
  const lines = block(block(compose, 'services', '').join('\n'), service, '  ');
  const env: Record<string, string> = {};
  const envStart = lines.findIndex((l) => l.trim() === 'environment:');
  if (envStart < 0) return env;
  for (const l of lines.slice(envStart + 1)) {
    if (!l.startsWith('      ')) break;
    if (l.trim() === '<<: *ccpipe-env') Object.assign(env, anchorEnv());
    const m = /^\s+([A-Z][A-Z0-9_]*): (.*)$/.exec(l);
    if (m) env[m[1]!] = interpolate(yamlScalar(m[2]!), { CCPIPE_CRAWL: 'CC-MAIN-2024-30' });
  }
  return env;
}
function anchorEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const l of block(compose, 'x-ccpipe-env', '')) {
    const m = /^\s+([A-Z][A-Z0-9_]*): (.*)$/.exec(l);
    if (m) env[m[1]!] = interpolate(yamlScalar(m[2]!), {});
  }
  return env;
}
function serviceLines(service: string): string[] {
  return block(block(compose, 'services', '').join('\n'), service, '  ');
}

describe('filter flags', () => {
  const filterOptions = describeOptions().filter((o) => o.key.startsWith('filter'));

  it.each(['batcher', 'run'])('gives ccpipe %s a flag for every filter rule of the config table', (name) => {
    expect(filterOptions.map((o) => o.env)).toEqual(expect.arrayContaining(['CCPIPE_FILTER_MIMES_DETECTED', 'CCPIPE_FILTER_URL_REGEX_EXCLUDE', 'CCPIPE_FILTER_DOMAINS_ALLOW', 'CCPIPE_FILTER_DOMAINS_DENY']));
    const cmd = buildProgram().commands.find((c) => c.name() === name)!;
    expect(cmd.options.map((o) => o.long)).toEqual(expect.arrayContaining(filterOptions.map((o) => `--${o.flag}`)));
  });

  it('refuses a bad regex before the batcher starts, with CCP_ERR_CONFIG naming the flag', async () => {
    await expect(buildProgram().parseAsync(['node', 'ccpipe', 'batcher', '--crawl', 'CC-MAIN-2024-30', '--url-regex-exclude', '(?<x'], { from: 'node' })).rejects.toMatchObject({
      code: 'CCP_ERR_CONFIG',
      message: expect.stringContaining('--url-regex-exclude / CCPIPE_FILTER_URL_REGEX_EXCLUDE: not a valid JavaScript regular expression'),
    });
  });
});

describe('docker-compose.yml', () => {
  it('names only env vars of the config table (CCPIPE_*, CC_*, RABBITMQ_*, LOG_*)', () => {
    const known = new Set(describeOptions().map((o) => o.env));
    const used = new Set(compose.match(/\b(?:CCPIPE|CC|RABBITMQ|LOG)_[A-Z0-9_]+/g) ?? []);
    expect(used.size).toBeGreaterThan(5);
    expect([...used].filter((n) => !known.has(n))).toEqual([]);
  });

  it.each(['batcher', 'worker', 'merger', 'api'])('gives %s a configuration loadConfig accepts', (service) => {
    const env = serviceEnv(service);
    expect(env['CCPIPE_DATA']).toBe('/data');
    expect(() => loadConfig(env)).not.toThrow();
  });

  it('passes every record filter of the config table to the batcher (unset by default, as the CLI)', () => {
    const env = serviceEnv('batcher');
    const filters = describeOptions().filter((o) => o.key.startsWith('filter')).map((o) => o.env);
    expect(filters.filter((e) => !(e in env))).toEqual([]);
    // unset in the shell, each is empty, which the config reads as unset: the CLI's defaults apply
    const cfg = loadConfig(env);
    expect([cfg.filterMimes, cfg.filterUrlRegex, cfg.filterDomainsAllow, cfg.filterDomainsDeny]).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('runs only commands the CLI has', () => {
    const commands = buildProgram().commands.map((c) => c.name());
    for (const s of ['batcher', 'worker', 'api']) {
      const m = /command: \["([a-z]+)"\]/.exec(serviceLines(s).join('\n'));
      expect(m?.[1]).toBe(s);
      expect(commands).toContain(s);
    }
    expect(commands).toContain('merge');
  });

  it('runs the merger as the merge service (merge --every), not a shell loop, with its metrics port and the image healthcheck', () => {
    const merger = serviceLines('merger').join('\n');
    const m = /command: \["merge", "--every", "\$\{MERGE_EVERY:-(\d+)\}", "--min-new-ratio", "\$\{MERGE_MIN_NEW_RATIO:-([\d.]+)\}", "--max-wait", "\$\{MERGE_MAX_WAIT:-(\d+)\}", "--memory-limit", "\$\{MERGE_MEMORY_LIMIT:-(\d+MB)\}"\]/.exec(merger);
    expect(m?.slice(1, 4).map(Number)).toEqual([expect.any(Number), expect.any(Number), expect.any(Number)]);
    expect(m![4]).toBe('256MB'); // the merge's own default
    expect(Number(m![1])).toBeGreaterThan(0);
    expect(Number(m![2])).toBeGreaterThan(0);
    expect(Number(m![3])).toBeGreaterThan(Number(m![1])); // the longest wait spans several checks
    const merge = buildProgram().commands.find((c) => c.name() === 'merge')!;
    expect(merge.options.map((o) => o.long)).toEqual(expect.arrayContaining(['--every', '--min-new-ratio', '--max-wait', '--metrics-port', '--memory-limit']));
    // its temp dir (DuckDB spill, staged S3 inputs) lies on the cache volume, not in the container's writable layer
    const cacheMount = /- ccpipe-merge-cache:(\S+)/.exec(merger)?.[1];
    expect(cacheMount).toBe(serviceEnv('merger')['CCPIPE_MERGE_CACHE_DIR']);
    expect(serviceEnv('merger')['TMPDIR']).toMatch(new RegExp(`^${cacheMount}/`));
    expect(merger).not.toMatch(/entrypoint|\/bin\/sh|while/);
    expect(merger).not.toMatch(/healthcheck/);
    expect(loadConfig(serviceEnv('merger')).metricsPort).toBe(MERGER_METRICS_PORT);
    expect(merger).not.toMatch(/^\s+ports:/m);
  });

  it('lets workers scale: no host ports, no fixed container name; stopping one lets it drain first', () => {
    const worker = serviceLines('worker').join('\n');
    const grace = /stop_grace_period: (\d+)s/.exec(worker);
    expect(Number(grace?.[1]) * 1000).toBeGreaterThan(WORKER_DRAIN_MS + 5_000);
    expect(worker).not.toMatch(/^\s+ports:/m);
    expect(worker).not.toMatch(/container_name/);
    expect(worker).toMatch(/condition: service_healthy/);
  });

  it('connects to the broker as the user rabbitmq/users.json creates, with that password', () => {
    const url = new URL(loadConfig(anchorEnv()).rabbitmqUrl);
    expect(url.hostname).toBe('rabbitmq');
    const users = JSON.parse(read('rabbitmq/users.json')) as {
      users: { name: string; password_hash: string; hashing_algorithm: string }[];
      permissions: { user: string; vhost: string; configure: string; write: string; read: string }[];
    };
    const user = users.users.find((u) => u.name === url.username);
    expect(user?.hashing_algorithm).toBe('rabbit_password_hashing_sha256');
    // RabbitMQ's sha256 scheme: base64(salt[4] ++ sha256(salt ++ password))
    const raw = Buffer.from(user!.password_hash, 'base64');
    const salt = raw.subarray(0, 4);
    const digest = createHash('sha256').update(Buffer.concat([salt, Buffer.from(decodeURIComponent(url.password))])).digest();
    expect(raw.subarray(4).equals(digest)).toBe(true);
    expect(users.permissions).toContainEqual({ user: url.username, vhost: '/', configure: '.*', write: '.*', read: '.*' });
  });

  it('mounts the definitions where rabbitmq.conf imports them from, and enables the plugins', () => {
    const conf = read('rabbitmq/rabbitmq.conf');
    const dir = /^definitions\.local\.path = (\S+)$/m.exec(conf)?.[1];
    expect(dir).toBe('/etc/rabbitmq/definitions');
    const rabbit = serviceLines('rabbitmq').join('\n');
    for (const f of ['rabbitmq/users.json', 'rabbitmq/definitions.json']) {
      expect(rabbit).toMatch(new RegExp(`\\./${f.replace(/\./g, '\\.')}:${dir}/[\\w-]+\\.json:ro`));
      expect(existsSync(join(REPO_ROOT, f))).toBe(true);
    }
    expect(rabbit).toContain('./rabbitmq/rabbitmq.conf:/etc/rabbitmq/conf.d/');
    expect(rabbit).toContain('rabbitmq-diagnostics", "-q", "check_port_connectivity"');
    expect(read('rabbitmq/enabled_plugins').trim()).toBe('[rabbitmq_management,rabbitmq_prometheus].');
  });

  it('the broker definitions files agree on the RabbitMQ version, the one of the image compose runs', () => {
    const version = (f: string): unknown => (JSON.parse(read(f)) as { rabbit_version?: unknown }).rabbit_version;
    const image = /image: rabbitmq:(\d+\.\d+)-management/.exec(serviceLines('rabbitmq').join('\n'))?.[1];
    expect(image).toBeDefined();
    expect(version('rabbitmq/users.json')).toBe(version('rabbitmq/definitions.json'));
    expect(String(version('rabbitmq/definitions.json'))).toMatch(new RegExp(`^${image!.replace('.', '\\.')}\\.\\d+$`));
  });

  it('needs CCPIPE_CRAWL only in the batcher, and lets it be unset there', () => {
    expect(compose).not.toMatch(/\$\{[A-Z0-9_]+:?\?/); // `${X:?}` fails every compose command, even `ps`
    const users = ['batcher', 'worker', 'merger', 'api'].filter((s) => 'CCPIPE_CRAWL' in serviceEnv(s));
    expect(users).toEqual(['batcher']);
    expect(serviceEnv('batcher')['CCPIPE_CRAWL']).toBe('');
    expect(loadConfig(serviceEnv('batcher')).crawl).toBeUndefined();
  });

  it('keeps Prometheus from asking outside DNS for a target whose container is not running', () => {
    // Docker's DNS answers an unknown single-label name itself only when the container set ndots > 0 explicitly;
    // without search domains the resolver does not try <name>.<host domain> outside either
    const prom = serviceLines('prometheus').join('\n');
    const ndots = /dns_opt:\n\s+- ndots:(\d+)/.exec(prom)?.[1];
    expect(Number(ndots)).toBeGreaterThan(0);
    expect(prom).toMatch(/^\s+dns_search: \.$/m);
    // every target it scrapes is a single-label compose name
    const names = [...prometheus.matchAll(/"([\w.-]+):\d+"|names: \["([\w.-]+)"\]/g)].map((m) => m[1] ?? m[2]!);
    expect(names.length).toBeGreaterThan(4);
    expect(names.filter((n) => n.includes('.'))).toEqual([]);
  });

  it('mounts every file it names from the repository', () => {
    const mounts = [...compose.matchAll(/- \.\/([\w./-]+):/g)].map((m) => m[1]!);
    expect(mounts.length).toBeGreaterThan(5);
    expect(mounts.filter((p) => !existsSync(join(REPO_ROOT, p)))).toEqual([]);
  });
});

describe('rabbitmq/definitions.json', () => {
  it('declares exactly the topology the code declares', () => {
    const defs = JSON.parse(read('rabbitmq/definitions.json')) as {
      queues: { name: string; durable: boolean; arguments: Record<string, unknown> }[];
      exchanges: { name: string; type: string }[];
      bindings: { source: string; destination: string }[];
    };
    // the batches' queue and the merge tasks' (merge across machines), each with its DLQ
    const all = [topologyNames(), mergeTaskTopologyNames()];
    const byName = new Map(defs.queues.map((q) => [q.name, q]));
    expect([...byName.keys()].sort()).toEqual(all.flatMap((names) => [names.queue, names.deadLetterQueue]).sort());
    for (const names of all) {
      expect(byName.get(names.queue)?.arguments).toEqual(workQueueArguments(names));
      expect(byName.get(names.deadLetterQueue)?.arguments).toEqual(deadLetterQueueArguments());
    }
    expect(defs.exchanges).toEqual(all.map((names) => expect.objectContaining({ name: names.deadLetterExchange, type: 'fanout' })));
    expect(defs.bindings).toEqual(all.map((names) => expect.objectContaining({ source: names.deadLetterExchange, destination: names.deadLetterQueue })));
  });
});

describe('prometheus.yml', () => {
  const targets = (job: string): string[] => {
    const lines = block(block(prometheus, 'scrape_configs', '').join('\n').replace(/^ {2}- job_name: (\S+)$/gm, '  $1:'), job, '  ');
    return [...lines.join('\n').matchAll(/"([\w.-]+:\d+)"/g)].map((m) => m[1]!);
  };
  const defaultPort = (file: string): number => Number(/metricsPort \?\? (\d+)/.exec(read(file))?.[1]);

  it('scrapes the batcher and the api on the ports compose gives them, which are their defaults', () => {
    const batcherPort = loadConfig(serviceEnv('batcher')).metricsPort;
    expect(batcherPort).toBe(defaultPort('packages/batcher/src/main.ts'));
    // by DNS, as the workers: an exited batcher drops out of the targets
    const batcherJob = /job_name: batcher\n\s+dns_sd_configs:\n\s+- names: \["batcher"\]\n\s+type: A\n\s+port: (\d+)/.exec(prometheus);
    expect(Number(batcherJob?.[1])).toBe(batcherPort);
    const apiPort = loadConfig(serviceEnv('api')).apiPort;
    expect(apiPort).toBe(loadConfig({}).apiPort);
    // every replica by DNS (--scale api=N with API_PORT a range), on the port it serves
    const job = /job_name: api\n\s+dns_sd_configs:\n\s+- names: \["api"\]\n\s+type: A\n\s+port: (\d+)/.exec(prometheus);
    expect(Number(job?.[1])).toBe(apiPort);
    expect(serviceLines('api').join('\n')).toContain(`"\${API_PORT:-${apiPort}}:${apiPort}"`);
  });

  it('finds every worker replica by DNS on the worker metrics port', () => {
    const workerPort = loadConfig(serviceEnv('worker')).metricsPort;
    expect(workerPort).toBe(defaultPort('packages/worker/src/main.ts'));
    const job = /job_name: worker\n\s+dns_sd_configs:\n\s+- names: \["worker"\]\n\s+type: A\n\s+port: (\d+)/.exec(prometheus);
    expect(Number(job?.[1])).toBe(workerPort);
  });

  it("gives merge-workers their own memory limit, the merge-worker's default, not the merger's", () => {
    const m = /command: \["merge-worker", "--memory-limit", "\$\{MERGE_WORKER_MEMORY_LIMIT:-([^}]+)\}"\]/.exec(serviceLines('merge-worker').join('\n'));
    expect(m?.[1]).toBe(MERGE_WORKER_MEMORY_LIMIT);
    expect(MERGE_WORKER_MEMORY_LIMIT).not.toBe('256MB'); // the merger's: a stage task took 38 % longer under it (docs/merge-tasks.md)
    const cmd = buildProgram().commands.find((c) => c.name() === 'merge-worker')!;
    expect(cmd.options.find((o) => o.long === '--memory-limit')?.description).toContain(`default ${MERGE_WORKER_MEMORY_LIMIT}`);
  });

  it('finds every merge-worker replica by DNS on the port compose gives it, which is its default', () => {
    const port = loadConfig(serviceEnv('merge-worker')).metricsPort;
    expect(port).toBe(MERGE_WORKER_METRICS_PORT);
    const job = /job_name: merge-worker\n\s+dns_sd_configs:\n\s+- names: \["merge-worker"\]\n\s+type: A\n\s+port: (\d+)/.exec(prometheus);
    expect(Number(job?.[1])).toBe(port);
  });

  it('scrapes the merger service on the port compose gives it, which is its default', () => {
    expect(targets('merger')).toEqual([`merger:${loadConfig(serviceEnv('merger')).metricsPort}`]);
    expect(loadConfig(serviceEnv('merger')).metricsPort).toBe(MERGER_METRICS_PORT);
  });

  it('has a job for every service compose runs with a metrics endpoint, and only those and the broker', () => {
    const jobs = [...prometheus.matchAll(/^ {2}- job_name: (\S+)$/gm)].map((m) => m[1]!);
    expect(jobs.sort()).toEqual(['api', 'batcher', 'merge-worker', 'merger', 'rabbitmq', 'rabbitmq-queues', 'worker']);
  });

  it('scrapes the rabbitmq_prometheus plugin, aggregated and per queue', () => {
    expect(targets('rabbitmq')).toEqual(['rabbitmq:15692']);
    expect(targets('rabbitmq-queues')).toEqual(['rabbitmq:15692']);
    expect(prometheus).toMatch(/metrics_path: \/metrics\/detailed\n\s+params:\n\s+family: \["queue_coarse_metrics"\]/);
    expect(read('rabbitmq/rabbitmq.conf')).toMatch(/^prometheus\.tcp\.port = 15692$/m);
  });
});

describe('grafana', () => {
  const dash = JSON.parse(read('grafana/dashboards/ccpipe.json')) as {
    panels: { type: string; datasource?: { uid: string }; targets?: { expr: string; datasource: { uid: string } }[] }[];
  };
  const exprs = dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));

  it('uses only ccpipe metrics the services register', async () => {
    const registry = new Registry();
    batcherMetrics(registry);
    workerMetrics(registry);
    apiMetrics(registry);
    lakeReaderMetrics(registry, () => undefined);
    searchMetrics(registry, () => undefined);
    indexMetrics(registry, async () => null);
    mergeMetrics(registry);
    mergeWorkerMetrics(registry);
    const json = await registry.getMetricsAsJSON();
    const registered = new Set(json.map((m) => m.name));
    const used = new Set(exprs.flatMap((e) => e.match(/\bccpipe_\w+/g) ?? []).map((n) => n.replace(/_(bucket|sum|count)$/, '')));
    expect(used.size).toBeGreaterThan(20);
    expect([...used].filter((n) => !registered.has(n))).toEqual([]);
    // the suffixes are only used on histograms
    const histograms = new Set(json.filter((m) => String(m.type) === 'histogram').map((m) => m.name));
    const suffixed = exprs.flatMap((e) => [...e.matchAll(/\b(ccpipe_\w+)_(?:bucket|sum|count)\b/g)].map((m) => m[1]!));
    expect(suffixed.filter((n) => !histograms.has(n))).toEqual([]);
  });

  it('shows merge duration (total and by phase) and reads `up` only for jobs prometheus.yml has', () => {
    expect(exprs.some((e) => e.includes('ccpipe_merge_duration_seconds_bucket'))).toBe(true);
    expect(exprs.some((e) => /ccpipe_merge_phase_seconds_sum.*by \(phase\)|by \(phase\).*ccpipe_merge_phase_seconds_sum/.test(e))).toBe(true);
    const jobs = new Set([...prometheus.matchAll(/^ {2}- job_name: (\S+)$/gm)].map((m) => m[1]!));
    const used = exprs.flatMap((e) => [...e.matchAll(/\bjob="([^"]+)"/g)].map((m) => m[1]!));
    expect(used).toEqual(expect.arrayContaining(['merger', 'worker']));
    expect(used.filter((j) => !jobs.has(j))).toEqual([]);
  });

  it('filters queue metrics by the real queue names and reads the provisioned datasource', () => {
    const names = topologyNames();
    const queueExprs = exprs.filter((e) => e.includes('rabbitmq_detailed_queue_'));
    expect(queueExprs.length).toBeGreaterThan(0);
    for (const e of queueExprs) expect(e).toContain(`queue=~"${names.queue}|${names.deadLetterQueue}"`);
    const uid = /^\s+uid: (\S+)$/m.exec(read('grafana/provisioning/datasources/prometheus.yml'))?.[1];
    const uids = new Set(dash.panels.flatMap((p) => [p.datasource?.uid, ...(p.targets ?? []).map((t) => t.datasource.uid)]).filter(Boolean));
    expect([...uids]).toEqual([uid]);
    expect(read('grafana/provisioning/dashboards/ccpipe.yml')).toContain('path: /var/lib/grafana/dashboards');
    expect(serviceLines('grafana').join('\n')).toContain('./grafana/dashboards:/var/lib/grafana/dashboards:ro');
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  it('copies every workspace manifest before npm ci and runs the real CLI entry point', () => {
    const workspaces = (JSON.parse(read('package.json')) as { workspaces: string[] }).workspaces;
    for (const w of workspaces) expect(dockerfile).toContain(`COPY ${w}/package.json ${w}/`);
    const entry = /^ENTRYPOINT \["node", "([^"]+)"\]$/m.exec(dockerfile)?.[1];
    expect(entry).toBe('packages/cli/bin/ccpipe.js');
    expect(existsSync(join(REPO_ROOT, entry!))).toBe(true);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^FROM node:20-bookworm-slim$/m);
  });

  it('has a healthcheck on /healthz of the port each service configures, which every compose pipeline service sets', () => {
    const hc = /^HEALTHCHECK [^\n]*\\\n\s*CMD \["node", "-e", "(.+)"\]$/m.exec(dockerfile)?.[1];
    expect(hc).toContain('/healthz');
    expect(hc).toMatch(/process\.env\.CCPIPE_METRICS_PORT\|\|process\.env\.CCPIPE_API_PORT/);
    for (const s of ['batcher', 'worker', 'merger']) expect({ s, port: loadConfig(serviceEnv(s)).metricsPort }).toEqual({ s, port: expect.any(Number) });
  });
});
