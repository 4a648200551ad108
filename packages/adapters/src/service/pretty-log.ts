/**
 * The one status line (a progress bar) a command draws on the terminal, and which log lines must not cut in two: the
 * bar is drawn on stderr without a newline, so a log line written meanwhile would start after the bar's text. A log
 * line first wipes the bar's line; the bar draws itself again on its next tick, below the line.
 */
export class StatusLine {
  private clearBar: (() => void) | null = null;

  /**
   * A bar is on the terminal from now on; `clear` wipes its line (e.g. writes `\r\x1b[2K` to its stream). Returns the
   * release, to call when the bar stops (idempotent).
   */
  hold(clear: () => void): () => void {
    this.clearBar = clear;
    return () => {
      if (this.clearBar === clear) this.clearBar = null;
    };
  }

  /** Wipes the bar's line, when a bar is drawn; before a log line is written. */
  clear(): void {
    this.clearBar?.();
  }
}

/** The process's status line: the one terminal a process has. */
export const terminalStatusLine = new StatusLine();

/** What a bar writes to wipe its own line: to column 0, clear the line. */
export const CLEAR_LINE = '\r\x1b[2K';

const LEVEL_COLOR: Record<string, number> = { trace: 90, debug: 36, info: 32, warn: 33, error: 31, fatal: 35 };
const PLAIN_VALUE = /^[^\s"=]+$/;

/** A value as `key=value` shows it: plain text as is, text with spaces or quotes quoted, the rest as JSON. */
function valueText(v: unknown): string {
  if (typeof v === 'string') return PLAIN_VALUE.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

/**
 * One pino JSON line as a person reads it: `HH:MM:SS.mmm LEVEL service: msg key=value …` (the time as pino wrote it,
 * UTC; no pid), then for an error under `err` its stack, indented, at error and fatal. `color` paints the level.
 * A line that is not a JSON object is returned as it came. Pure.
 */
export function prettyLogLine(json: string, color = false): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return json.endsWith('\n') ? json : `${json}\n`;
  const { level, time, service, pid: _pid, msg, err, ...rest } = o;
  const label = String(level ?? '').toUpperCase().padEnd(5);
  const code = LEVEL_COLOR[String(level)];
  const when = typeof time === 'string' ? (/T(\d\d:\d\d:\d\d(?:\.\d+)?)/.exec(time)?.[1] ?? time) : '';
  const parts = [when, color && code !== undefined ? `\x1b[${code}m${label}\x1b[0m` : label, `${service === undefined ? '' : `${String(service)}: `}${String(msg ?? '')}`];
  const fields = Object.entries(rest).map(([k, v]) => `${k}=${valueText(v)}`);
  let stack = '';
  if (err !== undefined && err !== null && typeof err === 'object') {
    const e = err as Record<string, unknown>;
    fields.push(`err=${valueText(`${e['code'] === undefined ? '' : `${String(e['code'])}: `}${String(e['message'] ?? e['type'] ?? '')}`)}`);
    if ((level === 'error' || level === 'fatal') && typeof e['stack'] === 'string') stack = `\n${e['stack'].replace(/^/gm, '    ')}`;
  } else if (err !== undefined) fields.push(`err=${valueText(err)}`);
  return `${parts.filter((p) => p !== '').join(' ')}${fields.length > 0 ? `  ${fields.join(' ')}` : ''}${stack}\n`;
}

/**
 * A pino destination for a terminal: each JSON line written as {@link prettyLogLine} to `out`, after `status` has wiped
 * any progress bar's line. Writes are synchronous (a TTY's are), so a line is on the terminal before the bar redraws.
 */
export function prettyDestination(out: NodeJS.WritableStream & { hasColors?: () => boolean }, status: StatusLine = terminalStatusLine): { write(s: string): boolean } {
  const color = out.hasColors?.() === true;
  return {
    write: (s: string): boolean => {
      status.clear();
      return out.write(prettyLogLine(s, color));
    },
  };
}
