import { closeSync, mkdirSync, openSync, promises as fsp, readSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { isGzipAt, iterateWarcFile, WarcError, type CdxRecord, type WarcFileEntry, type WarcRecord } from '@ccpipe/core';
import { cdxRecordFor } from './cdx-fields';
import { walkRecordMembers } from './member-stream';
import { mirrorWarcName, segmentFromDate, segmentFromPath, warcRelPath } from './layout';

/** Options of {@link indexWarcFile}. */
export interface IndexWarcFileOptions {
  input: string;
  out: string;
  crawl: string;
  segment?: string;
  languages: boolean;
}

/** One WARC placed in the mirror, with its CDX records. */
export interface WarcIndexResult {
  /** Path relative to the mirror root (POSIX), as in CDX `filename`. */
  relPath: string;
  records: number;
  cdx: CdxRecord[];
  skipped: Record<string, number>;
  /** True when the WARC was rewritten one gzip member per record. */
  rewritten: boolean;
  minTimestamp: string | undefined;
  maxTimestamp: string | undefined;
}

interface Pass {
  records: number;
  cdx: CdxRecord[];
  skipped: Record<string, number>;
  relPath: string;
}

/**
 * Places one WARC in the mirror and returns its CDX records. A gzip WARC with one member per record is
 * copied as is (CDX offsets are its member offsets); any other (one gzip stream, several records per
 * member, uncompressed) is rewritten with each record gzipped as its own member, so every CDX
 * offset/length is a standalone member. A WARC that breaks off (truncated, bad gzip) keeps the
 * records before the fault and counts `warc_error` in `skipped`.
 */
export async function indexWarcFile(opts: IndexWarcFileOptions): Promise<WarcIndexResult> {
  const streamed = streamPass(opts);
  if (streamed !== undefined) {
    await placeCopy(opts.input, opts.out, streamed.relPath);
    return finish(streamed, false);
  }
  const bytes = await fsp.readFile(opts.input);
  if (isGzipAt(bytes, 0)) {
    const copied = copyPass(bytes, opts);
    if (copied !== undefined) {
      await placeCopy(opts.input, opts.out, copied.relPath);
      return finish(copied, false);
    }
  }
  return finish(await rewritePass(bytes, opts), true);
}

/** The common case, in bounded memory: a gzip WARC with one member per record. */
function streamPass(opts: IndexWarcFileOptions): Pass | undefined {
  const head = Buffer.alloc(2);
  const fd = openSync(opts.input, 'r');
  try {
    readSync(fd, head, 0, 2, 0);
  } finally {
    closeSync(fd);
  }
  if (!isGzipAt(head, 0)) return undefined;
  const pass = newPass();
  const end = walkRecordMembers(opts.input, (record, offset, length) => {
    if (pass.relPath === '') pass.relPath = relPathFor(opts, record.date);
    pass.records += 1;
    addCdx(pass, record, offset, length, opts.languages);
  });
  if (end === 'not_aligned') return undefined;
  if (end === 'warc_error') pass.skipped.warc_error = (pass.skipped.warc_error ?? 0) + 1;
  if (pass.relPath === '') pass.relPath = relPathFor(opts, undefined);
  return pass;
}

function finish(p: Pass, rewritten: boolean): WarcIndexResult {
  let min: string | undefined;
  let max: string | undefined;
  for (const r of p.cdx) {
    if (min === undefined || r.timestamp < min) min = r.timestamp;
    if (max === undefined || r.timestamp > max) max = r.timestamp;
  }
  return { relPath: p.relPath, records: p.records, cdx: p.cdx, skipped: p.skipped, rewritten, minTimestamp: min, maxTimestamp: max };
}

/** Walks the file; `onEntry` gets each record with its mirror path. Stops (counting) at a WARC fault. */
function walk(bytes: Buffer, opts: IndexWarcFileOptions, pass: Pass, onEntry: (e: WarcFileEntry, relPath: string) => boolean): void {
  try {
    for (const entry of iterateWarcFile(bytes)) {
      if (pass.relPath === '') pass.relPath = relPathFor(opts, entry.record.date);
      pass.records += 1;
      if (!onEntry(entry, pass.relPath)) return;
    }
  } catch (err) {
    if (!(err instanceof WarcError)) throw err;
    pass.skipped.warc_error = (pass.skipped.warc_error ?? 0) + 1;
  }
  if (pass.relPath === '') pass.relPath = relPathFor(opts, undefined);
}

/** The WARC's mirror path: segment from the option, else the input path, else the first WARC-Date. */
function relPathFor(opts: IndexWarcFileOptions, firstDate: string | undefined): string {
  const segment = opts.segment ?? segmentFromPath(opts.input) ?? segmentFromDate(firstDate);
  return warcRelPath(opts.crawl, segment, mirrorWarcName(opts.input, true));
}

function newPass(): Pass {
  return { records: 0, cdx: [], skipped: {}, relPath: '' };
}

function addCdx(pass: Pass, record: WarcRecord, offset: number, length: number, languages: boolean): void {
  const r = cdxRecordFor(record, { filename: pass.relPath, offset, length }, { languages });
  if (typeof r === 'string') pass.skipped[r] = (pass.skipped[r] ?? 0) + 1;
  else pass.cdx.push(r);
}

/** Copy mode over the whole file (records split over several members); undefined when not aligned. */
function copyPass(bytes: Buffer, opts: IndexWarcFileOptions): Pass | undefined {
  let aligned = true;
  const pass = newPass();
  walk(bytes, opts, pass, (entry) => {
    if (!entry.memberPerRecord) {
      aligned = false;
      return false;
    }
    addCdx(pass, entry.record, entry.offset, entry.length, opts.languages);
    return true;
  });
  return aligned ? pass : undefined;
}

/** Copies the input WARC to its mirror path (temp then rename), unless it already is that file. */
async function placeCopy(input: string, out: string, relPath: string): Promise<void> {
  const dest = path.join(out, ...relPath.split('/'));
  await fsp.mkdir(path.dirname(dest), { recursive: true });
  if (await sameFile(input, dest)) return;
  const tmp = `${dest}.tmp-${process.pid}`;
  await fsp.copyFile(input, tmp);
  await fsp.rename(tmp, dest);
}

/** Rewrite mode: every record becomes its own gzip member in the mirror copy, written as it goes. */
async function rewritePass(bytes: Buffer, opts: IndexWarcFileOptions): Promise<Pass> {
  const pass = newPass();
  let offset = 0;
  let fd: number | undefined;
  let tmp = '';
  try {
    walk(bytes, opts, pass, (entry, relPath) => {
      if (fd === undefined) {
        const dest = path.join(opts.out, ...relPath.split('/'));
        mkdirSync(path.dirname(dest), { recursive: true });
        tmp = `${dest}.tmp-${process.pid}`;
        fd = openSync(tmp, 'w');
      }
      const member = gzipSync(entry.raw);
      writeSync(fd, member);
      addCdx(pass, entry.record, offset, member.length, opts.languages);
      offset += member.length;
      return true;
    });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const dest = path.join(opts.out, ...pass.relPath.split('/'));
  if (tmp === '') {
    await fsp.mkdir(path.dirname(dest), { recursive: true });
    await fsp.writeFile(dest, Buffer.alloc(0));
  } else {
    await fsp.rename(tmp, dest);
  }
  return pass;
}

async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [sa, sb] = await Promise.all([fsp.stat(a), fsp.stat(b)]);
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch {
    return false;
  }
}
