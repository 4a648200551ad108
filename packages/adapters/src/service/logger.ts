import pino, { type Logger } from 'pino';
import { prettyDestination } from './pretty-log';

export type { Logger } from 'pino';

/**
 * The root logger of a service: pino JSON to stdout (or to `destination`), `service` on every line. When stdout is a
 * terminal (and no `destination` is given) the same lines are written for a person instead ({@link prettyDestination}:
 * time, level, service, message, `key=value` fields), wiping a progress bar's line first so the two never
 * interleave; JSON otherwise (compose, CI, a pipe), byte for byte as before. `stdout` is for tests. Untrusted data
 * (URLs, titles) goes under named keys at debug level only; metric-style counts at info.
 */
export function createLogger(opts: { service: string; level: string; destination?: NodeJS.WritableStream; stdout?: NodeJS.WritableStream & { isTTY?: boolean } }): Logger {
  const stdout = opts.stdout ?? process.stdout;
  return pino(
    {
      level: opts.level,
      base: { service: opts.service, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination ?? (stdout.isTTY === true ? prettyDestination(stdout) : opts.stdout ?? pino.destination({ fd: 1, sync: false })),
  );
}
