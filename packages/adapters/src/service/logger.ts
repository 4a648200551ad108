import pino, { type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * The root logger of a service: pino JSON to stdout (or to `destination`), `service` on every line. Untrusted data
 * (URLs, titles) goes under named keys at debug level only; metric-style counts at info.
 */
export function createLogger(opts: { service: string; level: string; destination?: NodeJS.WritableStream }): Logger {
  return pino(
    {
      level: opts.level,
      base: { service: opts.service, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
