import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { createGunzip } from 'node:zlib';
import { Decompress as ZstdStream } from 'fzstd';
import { readParquetSource } from './parquet-source';
import {
  CcpError, DelimitedReader, JsonlReader, resolveColumns,
  type DelimitedRecord, type ImportColumnNames, type ImportColumns, type JsonlRecord, type OptionalImportColumn,
} from '@ccpipe/core';

/** Input formats `ccpipe import` reads. */
export const IMPORT_FORMATS = ['csv', 'tsv', 'jsonl', 'parquet'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** The values of one input row by role, and its other columns (in input order) for `extras`. */
export interface RowValues {
  url: unknown;
  ts: unknown;
  status: unknown;
  title: unknown;
  text: unknown;
  extras: [string, unknown][];
}

/** One input row: its values, or why it could not be read as a row (`reason` a closed set, `message` the detail). */
export type SourceRow =
  | { line: number; values: RowValues; raw: () => string; badUtf8: boolean }
  | { line: number; reason: 'bad-record' | 'not-utf8'; message: string; raw: string };

/** An input file that cannot be imported at all (missing, empty, binary, no url column): nothing of it is written. */
export class ImportInputError extends CcpError {
  constructor(file: string, message: string, options: { cause?: unknown } = {}) {
    super('CCP_ERR_IMPORT_INPUT', `${file}: ${message}`, { ...options, retryable: false, detail: { file } });
  }
}

/** The format a file name says (`.csv`, `.tsv`/`.tab`, `.jsonl`/`.ndjson`, each optionally `.gz`/`.zst`; `.parquet`), or null. */
export function formatOfName(path: string): ImportFormat | null {
  if (/\.(parquet|parq)$/i.test(path)) return 'parquet';
  const name = basename(path).toLowerCase().replace(/\.(gz|gzip|zst|zstd)$/, '');
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.tsv') || name.endsWith('.tab')) return 'tsv';
  if (name.endsWith('.jsonl') || name.endsWith('.ndjson') || name.endsWith('.json')) return 'jsonl';
  return null;
}

/** Bytes read before deciding a file is text: a NUL byte in them means it is not (CSV, TSV and JSONL never hold one). */
const SNIFF_BYTES = 8192;
const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

/**
 * A file's decompressed bytes, chunk by chunk: gzip and zstd are recognised by their magic bytes (whatever the file
 * is called), anything else is read as it is. Memory is bounded by the stream's chunks.
 * @throws ImportInputError when the file cannot be opened or its compressed stream is damaged
 */
async function* decompressed(path: string): AsyncGenerator<Uint8Array> {
  const raw = createReadStream(path, { highWaterMark: 1 << 20 });
  const it = raw[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let first: IteratorResult<Buffer>;
  try {
    first = await it.next();
  } catch (cause) {
    throw new ImportInputError(path, `cannot be read: ${(cause as Error).message}`, { cause });
  }
  if (first.done === true) return;
  const head = first.value;
  const rest = async function* (): AsyncGenerator<Buffer> {
    yield head;
    for (let r = await it.next(); r.done !== true; r = await it.next()) yield r.value;
  };
  const starts = (magic: number[]): boolean => magic.every((b, i) => head[i] === b);
  try {
    if (starts(GZIP_MAGIC)) {
      const gunzip = createGunzip();
      const feed = (async () => {
        for await (const c of rest()) if (!gunzip.write(c)) await new Promise((r) => gunzip.once('drain', r));
        gunzip.end();
      })();
      feed.catch((err: unknown) => gunzip.destroy(err as Error));
      for await (const c of gunzip) yield c as Buffer;
      await feed;
    } else if (starts(ZSTD_MAGIC)) {
      const out: Uint8Array[] = [];
      const z = new ZstdStream((chunk) => out.push(chunk));
      for await (const c of rest()) {
        z.push(c);
        while (out.length > 0) yield out.shift()!;
      }
      z.push(new Uint8Array(0), true);
      while (out.length > 0) yield out.shift()!;
    } else {
      yield* rest();
    }
  } catch (cause) {
    if (cause instanceof CcpError) throw cause;
    throw new ImportInputError(path, `is damaged (${(cause as Error).message})`, { cause });
  } finally {
    raw.destroy(); // a reader that stops early (checkSource) leaves no open file behind
  }
}

/** What {@link readSource} needs: the format and the column names (and which of them the user named). */
export interface SourceOptions {
  format: ImportFormat;
  columns: ImportColumnNames;
  explicit: ReadonlySet<OptionalImportColumn>;
}

/**
 * The rows of one input file, in order, each with its 1-based physical line (the header is line 1 of a CSV/TSV).
 * A row that cannot be read (a CSV quote left open, a JSONL line that is not a JSON object, text that is not UTF-8)
 * comes as its reason; the caller rejects it and goes on.
 * @throws ImportInputError for a file that cannot be imported at all: missing, empty, binary, or a CSV/TSV header
 *   without the url column (or a column named by flag)
 */
export async function* readSource(path: string, opts: SourceOptions): AsyncGenerator<SourceRow> {
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });
  const reader = opts.format === 'jsonl' ? new JsonlReader() : new DelimitedReader({ delimiter: opts.format === 'tsv' ? '\t' : ',' });
  let header: ImportColumns | null = null;
  let sniffed = 0;
  let any = false;
  let badUtf8 = false;
  const out: SourceRow[] = [];
  const take = (recs: (DelimitedRecord | JsonlRecord)[]): void => {
    for (const r of recs) {
      any = true;
      if ('error' in r) {
        out.push({ line: r.line, reason: 'bad-record', message: r.error, raw: r.raw });
        continue;
      }
      if ('value' in r) {
        out.push(jsonRow(r.line, r.value, opts.columns, badUtf8));
        continue;
      }
      if (header === null) {
        const cols = resolveColumns(r.fields, opts.columns, opts.explicit);
        if ('error' in cols) throw new ImportInputError(path, `line ${r.line}: ${cols.error}`);
        header = cols;
        continue;
      }
      out.push(delimitedRow(r.line, r.fields, header, opts.format === 'tsv' ? '\t' : ',', badUtf8));
    }
  };
  for await (const bytes of decompressed(path)) {
    if (sniffed < SNIFF_BYTES) {
      const nul = bytes.subarray(0, SNIFF_BYTES - sniffed).indexOf(0);
      if (nul >= 0) throw new ImportInputError(path, `looks binary (a NUL byte at byte ${sniffed + nul}), not ${opts.format.toUpperCase()} text`);
      sniffed += bytes.length;
    }
    const text = decoder.decode(bytes, { stream: true });
    // U+FFFD in the text that the bytes do not spell (EF BF BD) comes from bytes that are not UTF-8: from here on a
    // row holding one is rejected rather than imported with its characters replaced
    if (!badUtf8 && text.includes('\ufffd') && countOf(text, '\ufffd') > countBytes(bytes)) badUtf8 = true;
    take(reader.push(text));
    yield* out.splice(0);
  }
  take(reader.push(decoder.decode()));
  take(reader.end());
  yield* out.splice(0);
  if (!any) throw new ImportInputError(path, 'is empty');
  if (header === null && opts.format !== 'jsonl') throw new ImportInputError(path, 'has no header line');
}

function countOf(s: string, ch: string): number {
  let n = 0;
  for (let i = s.indexOf(ch); i >= 0; i = s.indexOf(ch, i + 1)) n++;
  return n;
}

/** Occurrences of U+FFFD's UTF-8 bytes (EF BF BD). */
function countBytes(b: Uint8Array): number {
  let n = 0;
  for (let i = b.indexOf(0xef); i >= 0 && i + 2 < b.length; i = b.indexOf(0xef, i + 1)) if (b[i + 1] === 0xbf && b[i + 2] === 0xbd) n++;
  return n;
}

function delimitedRow(line: number, fields: string[], h: ImportColumns, sep: string, badUtf8: boolean): SourceRow {
  const at = (i: number | null): string | undefined => (i === null ? undefined : fields[i]);
  return {
    line,
    values: {
      url: at(h.url), ts: at(h.ts), status: at(h.status), title: at(h.title), text: at(h.text),
      extras: h.extras.map((e) => [e.name, fields[e.index] ?? null]),
    },
    raw: () => fields.join(sep),
    badUtf8,
  };
}

/** A JSONL object's values by role: each key found as written, else regardless of case; every other key is an extra. */
function jsonRow(line: number, obj: Record<string, unknown>, names: ImportColumnNames, badUtf8: boolean): SourceRow {
  const keys = Object.keys(obj);
  const taken = new Set<string>();
  const pick = (want: string | undefined): unknown => {
    if (want === undefined || want === '') return undefined;
    const k = keys.includes(want) ? want : keys.find((x) => x.toLowerCase() === want.toLowerCase());
    if (k === undefined) return undefined;
    taken.add(k);
    return obj[k];
  };
  const values: RowValues = {
    url: pick(names.url), ts: pick(names.ts), status: pick(names.status), title: pick(names.title), text: pick(names.text), extras: [],
  };
  for (const k of keys) if (!taken.has(k)) values.extras.push([k, obj[k]]);
  return { line, values, raw: () => JSON.stringify(obj), badUtf8 };
}

/**
 * Reads a file only as far as its first row: whether it can be imported at all (see {@link readSource}'s throws).
 * @throws ImportInputError as readSource would
 */
export async function checkSource(path: string, opts: SourceOptions): Promise<void> {
  for await (const _ of rowsOf(path, opts)) return;
}

/** The rows of a file in its format: text formats by {@link readSource}, Parquet by readParquetSource. */
export function rowsOf(path: string, opts: SourceOptions): AsyncGenerator<SourceRow> {
  return opts.format === 'parquet' ? readParquetSource(path, opts) : readSource(path, opts);
}
