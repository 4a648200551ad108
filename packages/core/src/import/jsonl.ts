import { MAX_IMPORT_RAW_CHARS, MAX_IMPORT_RECORD_CHARS } from './delimited';

/**
 * One line of a JSON Lines file, or why it could not be read. `line` is the 1-based physical line (blank lines
 * count); `raw` holds at most the first {@link MAX_IMPORT_RAW_CHARS} characters of the line, without its line end.
 */
export type JsonlRecord = { line: number; value: Record<string, unknown> } | { line: number; error: string; raw: string };

const BOM = 0xfeff;
const CR = 13;

/** True when `s` holds only JSON whitespace (space, tab, CR, LF): such a line is skipped, not an error. */
function isBlank(s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c !== 32 && c !== 9 && c !== 13 && c !== 10) return false;
  }
  return true;
}

/**
 * Reads JSON Lines a chunk at a time: one JSON object per line. Lines end with LF (a CR before it is dropped; a lone
 * CR is JSON whitespace, not a line end); a UTF-8 BOM at the very start is dropped; blank (whitespace-only) lines
 * are skipped.
 *
 * Bad data never throws: the line comes back with `error` — `not JSON: <parser message>`, `not a JSON object`
 * (an array, number, string or null), or `line over 1 MiB` ({@link MAX_IMPORT_RECORD_CHARS}), which is never held
 * whole. Chunks may split the text anywhere; the records are the same for any split.
 */
export class JsonlReader {
  private line = 1;
  private started = false;
  private ended = false;
  /** The start of the line in progress, from earlier chunks (dropped once the line is too long). */
  private partial = '';
  /** Characters of the line in progress in earlier chunks. */
  private carried = 0;
  /** Its first characters, kept for `raw` once `partial` is dropped. */
  private head = '';

  /**
   * Reads one more chunk and returns the records of the lines it completed (possibly none).
   * @throws Error when called after {@link end} (a programming error, not bad data).
   */
  push(chunk: string): JsonlRecord[] {
    if (this.ended) throw new Error('JsonlReader.push after end()');
    const out: JsonlRecord[] = [];
    const t = chunk;
    const n = t.length;
    if (n === 0) return out;
    let i = 0;
    if (!this.started) {
      this.started = true;
      if (t.charCodeAt(0) === BOM) i = 1;
    }
    for (;;) {
      const lf = t.indexOf('\n', i);
      if (lf === -1) break;
      if (this.carried === 0) {
        // the whole line is in this chunk
        if (lf > i) {
          const rec = this.parseLine(t.slice(i, t.charCodeAt(lf - 1) === CR ? lf - 1 : lf));
          if (rec !== null) out.push(rec);
        }
      } else {
        const rec = this.finishCarried(t.slice(0, lf));
        if (rec !== null) out.push(rec);
      }
      this.line++;
      i = lf + 1;
    }
    if (i < n) this.carry(t.slice(i));
    return out;
  }

  /** Ends the input and returns the last line's record if the text did not end with a line end. Idempotent. */
  end(): JsonlRecord[] {
    if (this.ended) return [];
    this.ended = true;
    if (this.carried === 0) return [];
    const rec = this.finishCarried('');
    return rec === null ? [] : [rec];
  }

  private carry(s: string): void {
    if (this.head.length < MAX_IMPORT_RAW_CHARS) this.head += s.slice(0, MAX_IMPORT_RAW_CHARS - this.head.length);
    this.carried += s.length;
    // One character of slack: a CR at the end of this chunk may turn out to be part of a CRLF.
    this.partial = this.carried > MAX_IMPORT_RECORD_CHARS + 1 ? '' : this.partial + s;
  }

  /** Completes a line begun in an earlier chunk with `rest`, its part in this chunk (LF excluded). */
  private finishCarried(rest: string): JsonlRecord | null {
    const dropped = this.carried > MAX_IMPORT_RECORD_CHARS + 1;
    const text = dropped ? '' : this.partial + rest;
    const head = this.head;
    this.partial = '';
    this.carried = 0;
    this.head = '';
    if (dropped) return { line: this.line, error: 'line over 1 MiB', raw: head };
    return this.parseLine(text.charCodeAt(text.length - 1) === CR ? text.slice(0, -1) : text);
  }

  /** Parses one complete line (no LF, no trailing CR). Null for a blank line. */
  private parseLine(text: string): JsonlRecord | null {
    if (text.length > MAX_IMPORT_RECORD_CHARS) return { line: this.line, error: 'line over 1 MiB', raw: text.slice(0, MAX_IMPORT_RAW_CHARS) };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      if (isBlank(text)) return null;
      return { line: this.line, error: `not JSON: ${(err as Error).message}`, raw: text.slice(0, MAX_IMPORT_RAW_CHARS) };
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return { line: this.line, error: 'not a JSON object', raw: text.slice(0, MAX_IMPORT_RAW_CHARS) };
    }
    return { line: this.line, value: value as Record<string, unknown> };
  }
}
