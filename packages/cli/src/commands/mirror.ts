import { InvalidArgumentError, type Command } from 'commander';
import { buildMirror, serveMirror, type MirrorServer } from '@ccpipe/mirror';

/** Where `ccpipe mirror` writes and how `serve` learns to stop; tests pass their own. */
export interface MirrorCommandIo {
  write(line: string): void;
  /** Where error lines go (default: `write`; the CLI's own io writes them to stderr). */
  error?(line: string): void;
  /** Resolves when the server should stop. Default: the first SIGINT or SIGTERM. */
  waitForStop(server: MirrorServer): Promise<void>;
}

const defaultIo: MirrorCommandIo = {
  write: (l) => {
    process.stdout.write(l);
  },
  error: (l) => {
    process.stderr.write(l);
  },
  waitForStop: () =>
    new Promise<void>((resolve) => {
      const stop = (): void => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    }),
};

function positiveInt(name: string): (v: string) => number {
  return (v) => {
    if (!/^\d{1,15}$/.test(v) || Number(v) < 1) throw new InvalidArgumentError(`${name} must be a positive integer`);
    return Number(v);
  };
}

function port(v: string): number {
  if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new InvalidArgumentError('port must be 0-65535');
  return Number(v);
}

interface BuildFlags {
  crawl: string;
  out: string;
  blockSize?: number;
  shards?: number;
  blocksPerShard?: number;
  segment?: string;
  languages: boolean;
}

interface ServeFlags {
  port: number;
  host: string;
  slowDownEvery?: number;
  slowBody?: number;
}

/**
 * `ccpipe mirror build --crawl NAME --out DIR [--block-size N] [--shards N | --blocks-per-shard N] [--segment S] [--no-languages] WARC...`
 * indexes WARC files into Common Crawl's layout and prints a summary line per fact (records, CDX lines,
 * blocks, …). `ccpipe mirror serve DIR [--port P] [--host H] [--slow-down-every N] [--slow-body BPS]`
 * serves a mirror like data.commoncrawl.org, prints its URL, and stops cleanly on SIGINT/SIGTERM.
 * Failures print one `error:` line and set `process.exitCode = 1`.
 */
export function registerMirrorCommand(program: Command, io: MirrorCommandIo = defaultIo): void {
  const mirror = program.command('mirror').description('build or serve a local Common Crawl mirror');

  mirror
    .command('build')
    .description("index WARC files into Common Crawl's layout (cluster.idx, ZipNum cdx-*.gz, WARCs, paths, collinfo.json)")
    .requiredOption('--crawl <name>', 'crawl name, e.g. CC-MAIN-2030-40')
    .requiredOption('--out <dir>', 'mirror root (other crawls in it are kept)')
    .option('--block-size <n>', 'CDX lines per ZipNum block', positiveInt('block size'), 3000)
    .option('--shards <n>', 'number of cdx-NNNNN.gz shards, blocks spread evenly (default 1)', positiveInt('shards'))
    .option('--blocks-per-shard <n>', 'instead of --shards: blocks per shard', positiveInt('blocks-per-shard'))
    .option('--segment <name>', 'segment for WARCs whose path does not name one')
    .option('--no-languages', 'skip language identification (faster; no `languages` field)')
    .argument('<warcs...>', 'WARC files (.warc.gz one member per record, one gzip stream, or .warc)')
    .action(async (warcs: string[], flags: BuildFlags) => {
      try {
        const s = await buildMirror({
          crawl: flags.crawl, out: flags.out, warcs, languages: flags.languages,
          ...(flags.blockSize === undefined ? {} : { blockSize: flags.blockSize }),
          ...(flags.shards === undefined ? {} : { shards: flags.shards }),
          ...(flags.blocksPerShard === undefined ? {} : { blocksPerShard: flags.blocksPerShard }),
          ...(flags.segment === undefined ? {} : { segment: flags.segment }),
        });
        io.write(`crawl ${s.crawl}: ${s.warcFiles} WARC files (${s.rewrittenWarcs} rewritten one gzip member per record)\n`);
        io.write(`records ${s.records}, CDX lines ${s.cdxLines}, blocks ${s.blocks}, shards ${s.shards}\n`);
        const skipped = Object.entries(s.skipped).sort().map(([k, v]) => `${k}=${v}`).join(' ');
        io.write(`skipped ${skipped === '' ? 'none' : skipped}\n`);
        // an impossible WARC-Date (ClueWeb09 writes 2008-10-294T…) is refused, not cut into a timestamp: say so
        const badDates = s.skipped['bad_date'] ?? 0;
        if (badDates > 0) {
          (io.error ?? io.write)(`warning: ${badDates} record(s) left out: their WARC-Date is not a valid date and time (bad_date)\n`);
        }
      } catch (err) {
        (io.error ?? io.write)(`error: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });

  mirror
    .command('serve')
    .description('serve a mirror directory over HTTP with byte ranges, like data.commoncrawl.org')
    .argument('<dir>', 'mirror root')
    .option('--port <p>', 'TCP port (0 picks a free one)', port, 8080)
    .option('--host <h>', 'interface to bind', '127.0.0.1')
    .option('--slow-down-every <n>', 'answer every Nth request with 503 SlowDown', positiveInt('slow-down-every'))
    .option('--slow-body <bps>', 'throttle response bodies to about BPS bytes per second', positiveInt('slow-body'))
    .action(async (dir: string, flags: ServeFlags) => {
      let server: MirrorServer;
      try {
        server = await serveMirror({
          dir, port: flags.port, host: flags.host,
          faults: {
            ...(flags.slowDownEvery === undefined ? {} : { slowDownEvery: flags.slowDownEvery }),
            ...(flags.slowBody === undefined ? {} : { slowBodyBytesPerSec: flags.slowBody }),
          },
        });
      } catch (err) {
        (io.error ?? io.write)(`error: ${(err as Error).message}\n`);
        process.exitCode = 1;
        return;
      }
      io.write(`serving ${server.url}\n`);
      await io.waitForStop(server);
      await server.close();
      io.write('stopped\n');
    });
}
