/**
 * Longest record (CSV/TSV) or line (JSONL) an import takes, in UTF-16 characters without its line end. A longer one
 * is reported as a bad record and skipped; its text is never held whole, so one broken quote cannot make the
 * reader buffer the rest of a file.
 */
export const MAX_IMPORT_RECORD_CHARS = 1024 * 1024;

/** Most characters of a bad record's text kept in its `raw`, to show the user. */
export const MAX_IMPORT_RAW_CHARS = 1000;

/**
 * One record of a CSV/TSV file, or why it could not be read. `line` is the 1-based physical line the record starts
 * on (the header is line 1; blank lines and newlines inside quoted fields count), so users can find it in an editor.
 * `raw` holds at most the first {@link MAX_IMPORT_RAW_CHARS} characters of the record's text, without its line end.
 */
export type DelimitedRecord = { line: number; fields: string[] } | { line: number; error: string; raw: string };

/** The two separators an import reads. */
export interface DelimitedOptions {
  delimiter: ',' | '\t';
}

const LF = 10;
const CR = 13;
const QUOTE = 34;
const BOM = 0xfeff;

// Where the scan stands between two characters.
const REC_START = 0; // before a record (or a blank line)
const FIELD_START = 1; // after a delimiter, or at a record's first character
const UNQUOTED = 2; // inside a field that did not start with a quote
const QUOTED = 3; // inside a quoted field
const QUOTE_SEEN = 4; // a quote inside a quoted field: closes it, or is the first of `""`
const ENDED = 5; // end() was called

/**
 * Reads RFC 4180 CSV, or TSV, a chunk at a time. Fields may be quoted with `"` (also in TSV: quoting applies to any
 * field that starts with one), `""` in a quoted field is a quote, and delimiters and line ends inside quotes are data.
 * Lines end with LF, CRLF or a lone CR; a UTF-8 BOM at the very start is dropped; empty lines are skipped. A quote in
 * the middle of an unquoted field is kept as data, as most readers (and spreadsheet exports) do.
 *
 * Bad data never throws: the record comes back with `error` — `unexpected character after a closing quote`,
 * `record over 1 MiB` ({@link MAX_IMPORT_RECORD_CHARS}), or `unterminated quoted field (opened on line N)` at the end
 * of input — and reading goes on with the next record. After an unexpected character the rest of the record is still
 * read by the quoting rules (so a later quoted newline does not start a bogus record), but its content is dropped.
 *
 * Chunks may split the text anywhere (inside quotes, between CR and LF, inside `""`): the records are the same for any
 * split. Fields of a record are slices of the chunks, so a kept record keeps its chunk alive.
 */
export class DelimitedReader {
  private readonly delimiterCode: number;
  private state = REC_START;
  /** Physical line at the scan position. */
  private line = 1;
  private started = false;
  /** The last chunk ended with a CR that ended a line: an LF starting the next one belongs to it. */
  private skipLf = false;
  /** The last character of quoted data was a CR, so an LF right after it does not start another line. */
  private quotedCr = false;
  // The record in progress.
  private recLine = 0;
  private fields: string[] = [];
  private partial = '';
  /** Characters of the record in earlier chunks. */
  private carried = 0;
  /** Its first characters from earlier chunks, for `raw`. */
  private head = '';
  private error: string | null = null;
  private quoteLine = 0;

  constructor(opts: DelimitedOptions) {
    this.delimiterCode = opts.delimiter.charCodeAt(0);
  }

  /**
   * Reads one more chunk of the text and returns the records it completed (possibly none).
   * @throws Error when called after {@link end} (a programming error, not bad data).
   */
  push(chunk: string): DelimitedRecord[] {
    if (this.state === ENDED) throw new Error('DelimitedReader.push after end()');
    const out: DelimitedRecord[] = [];
    const t = chunk;
    const n = t.length;
    if (n === 0) return out;
    let i = 0;
    if (!this.started) {
      this.started = true;
      if (t.charCodeAt(0) === BOM) i = 1;
    }
    if (this.skipLf) {
      this.skipLf = false;
      if (t.charCodeAt(i) === LF) i++;
    }
    const dc = this.delimiterCode;
    // Where the record in progress starts in this chunk; 0 when it started in an earlier one.
    let recStart = i;
    while (i < n) {
      let s = this.state;
      if (s === REC_START) {
        const c = t.charCodeAt(i);
        if (c === LF || c === CR) {
          i = this.lineEnd(t, i);
          continue;
        }
        this.recLine = this.line;
        recStart = i;
        s = this.state = FIELD_START;
      }
      if (s === FIELD_START) {
        if (t.charCodeAt(i) === QUOTE) {
          this.state = QUOTED;
          this.quoteLine = this.line;
          this.quotedCr = false;
          i++;
          continue;
        }
        s = this.state = UNQUOTED;
      }
      if (s === UNQUOTED) {
        // the field's end: a plain loop over the field's own characters. Looking ahead with indexOf for each of the
        // three ends (kept between fields) made V8's optimized `push` scan to the chunk's end at every field — ~100×
        // slower once optimized, found by bench/import.bench.js (a parse of 400k rows: 8.3 s, now 0.3 s)
        let e = i;
        for (; e < n; e++) {
          const c = t.charCodeAt(e);
          if (c === dc || c === LF || c === CR) break;
        }
        if (e === n) e = -1;
        if (e === -1) {
          if (this.error === null) this.partial += t.slice(i);
          i = n;
          break;
        }
        if (this.error === null) this.fields.push(this.partial.length === 0 ? t.slice(i, e) : this.partial + t.slice(i, e));
        this.partial = '';
        if (t.charCodeAt(e) === dc) {
          this.state = FIELD_START;
          i = e + 1;
        } else {
          out.push(this.finish(t, recStart, e, null));
          i = this.lineEnd(t, e);
        }
        continue;
      }
      if (s === QUOTED) {
        const q = t.indexOf('"', i);
        const end = q === -1 ? n : q;
        if (end > i) {
          this.countQuotedLines(t, i, end);
          if (this.error === null) this.partial += t.slice(i, end);
        }
        if (q === -1) {
          i = n;
          break;
        }
        i = q + 1;
        s = this.state = QUOTE_SEEN;
        if (i === n) break;
      }
      // QUOTE_SEEN, with a character to look at
      const c = t.charCodeAt(i);
      if (c === QUOTE) {
        if (this.error === null) this.partial += '"';
        this.quotedCr = false;
        this.state = QUOTED;
        i++;
        continue;
      }
      if (c === dc || c === LF || c === CR) {
        if (this.error === null) this.fields.push(this.partial);
        this.partial = '';
        if (c === dc) {
          this.state = FIELD_START;
          i++;
        } else {
          out.push(this.finish(t, recStart, i, null));
          i = this.lineEnd(t, i);
        }
        continue;
      }
      this.fail('unexpected character after a closing quote');
      this.state = UNQUOTED;
    }
    if (this.state !== REC_START) this.carry(t, recStart);
    return out;
  }

  /**
   * Ends the input and returns the last record, if the text did not end with a line end. Idempotent: later calls
   * return `[]`; {@link push} after it throws.
   */
  end(): DelimitedRecord[] {
    const s = this.state;
    this.state = ENDED;
    if (s === REC_START || s === ENDED) return [];
    if (s === QUOTED) return [this.finish('', 0, 0, `unterminated quoted field (opened on line ${this.quoteLine})`)];
    if (this.error === null) this.fields.push(this.partial);
    return [this.finish('', 0, 0, null)];
  }

  /** Consumes the line end at `i` (LF, CR or CRLF), counts the line, and returns the position after it. */
  private lineEnd(t: string, i: number): number {
    this.line++;
    this.state = REC_START;
    if (t.charCodeAt(i) === LF) return i + 1;
    if (i + 1 === t.length) this.skipLf = true;
    else if (t.charCodeAt(i + 1) === LF) return i + 2;
    return i + 1;
  }

  /** Counts the line ends in quoted data `t[from, to)`; a CRLF split between two chunks counts once. */
  private countQuotedLines(t: string, from: number, to: number): void {
    let line = this.line;
    let cr = this.quotedCr;
    for (let k = from; k < to; k++) {
      const c = t.charCodeAt(k);
      if (c === LF) {
        if (!cr) line++;
        cr = false;
      } else {
        cr = c === CR;
        if (cr) line++;
      }
    }
    this.line = line;
    this.quotedCr = cr;
  }

  /** Marks the record in progress bad (the first reason wins) and stops keeping its content. */
  private fail(reason: string): void {
    if (this.error === null) this.error = reason;
    this.fields = [];
    this.partial = '';
  }

  /** Keeps what the record in progress needs from a chunk that ends inside it. */
  private carry(t: string, recStart: number): void {
    if (this.head.length < MAX_IMPORT_RAW_CHARS) this.head += t.slice(recStart, recStart + MAX_IMPORT_RAW_CHARS - this.head.length);
    this.carried += t.length - recStart;
    if (this.carried > MAX_IMPORT_RECORD_CHARS) this.fail('record over 1 MiB');
  }

  /**
   * Completes the record in progress, which ends at `t[end]` and began at `t[recStart]` (or in an earlier chunk).
   * Precedence of reasons, the same for any chunking: `forced` (end of input), then length, then the first other one.
   */
  private finish(t: string, recStart: number, end: number, forced: string | null): DelimitedRecord {
    const length = this.carried + end - recStart;
    const error = forced ?? (length > MAX_IMPORT_RECORD_CHARS ? 'record over 1 MiB' : this.error);
    let rec: DelimitedRecord;
    if (error === null) {
      rec = { line: this.recLine, fields: this.fields };
    } else {
      const rest = MAX_IMPORT_RAW_CHARS - this.head.length;
      const raw = rest > 0 ? this.head + t.slice(recStart, Math.min(end, recStart + rest)) : this.head;
      rec = { line: this.recLine, error, raw };
    }
    this.fields = [];
    this.partial = '';
    this.carried = 0;
    this.head = '';
    this.error = null;
    return rec;
  }
}
