import { inflateMember, isGzipAt } from './gzip-member';
import { parseWarcRecordAt, skipBlank, type ParsedRecord, type ReadWarcOptions, type WarcRecord } from './warc-record';
import { WarcError } from './warc-error';

/** One record of a WARC file, with where it sits. */
export interface WarcFileEntry {
  /**
   * When `memberPerRecord`: the byte range of the record's gzip member(s) in the file — exactly what a
   * CDX line's offset/length point at, re-readable alone with `readWarcRecord`. Otherwise: the record's
   * range in the uncompressed stream (for an uncompressed file that is also its range in the file).
   */
  offset: number;
  length: number;
  /**
   * True when the record starts and ends on gzip member boundaries (normally one member per record, as
   * Common Crawl writes; `members` > 1 when a producer split one record over several). False for an
   * uncompressed file, or a gzip stream holding several records in one member: re-gzip `raw` as its own
   * member to make the record addressable.
   */
  memberPerRecord: boolean;
  /** Whether the file is gzip. */
  compressed: boolean;
  /** Gzip members the range covers (0 unless `memberPerRecord`). */
  members: number;
  /** The record's uncompressed bytes: WARC head, block and its trailing line breaks. */
  raw: Uint8Array;
  record: WarcRecord;
}

/** Options of {@link iterateWarcFile}. */
export interface IterateWarcOptions extends ReadWarcOptions {
  /** Largest uncompressed size of one gzip member (a whole-file stream is one member). Default 1 GiB. */
  maxMemberBytes?: number;
}

/**
 * Walks every record of a whole WARC file (gzip, one or many records per member, or uncompressed),
 * yielding each with its offset/length and raw bytes; see {@link WarcFileEntry} for what the range means.
 * HTTP heads are parsed leniently (a bad one sets `record.httpError`) unless `lenientHttp: false`.
 * Records before a fault are yielded, then the generator throws WarcError (CCP_ERR_WARC_GZIP,
 * CCP_ERR_WARC_TRUNCATED, CCP_ERR_WARC_TOO_LARGE, CCP_ERR_WARC_HEADER). Trailing NUL/blank padding is
 * ignored. Pure; every loop consumes input, so it always ends.
 */
export function* iterateWarcFile(bytes: Uint8Array, opts: IterateWarcOptions = {}): Generator<WarcFileEntry, void, undefined> {
  const ropts: ReadWarcOptions = { ...opts, lenientHttp: opts.lenientHttp ?? true };
  if (!isGzipAt(bytes, 0)) {
    let pos = 0;
    for (;;) {
      const p = parseWarcRecordAt(bytes, pos, ropts);
      if (!p) return;
      yield { offset: p.start, length: p.end - p.start, memberPerRecord: false, compressed: false, members: 0, raw: bytes.subarray(p.start, p.end), record: p.record };
      pos = p.end;
    }
  }
  const maxMember = opts.maxMemberBytes ?? 1024 * 1024 * 1024;
  let pos = 0;
  // Uncompressed bytes not yet consumed (the head of a record split over members), and where they began.
  let pending: Uint8Array | undefined;
  let pendingMemberStart = 0;
  let pendingMembers = 0;
  let pendingAligned = false;
  let streamOffset = 0;
  while (pos < bytes.length) {
    if (!isGzipAt(bytes, pos)) {
      if (skipBlank(bytes, pos) >= bytes.length) break;
      throw new WarcError('CCP_ERR_WARC_GZIP', 'bytes after a gzip member are not a gzip member', { detail: { offset: pos } });
    }
    const m = inflateMember(bytes, pos, maxMember);
    let data: Uint8Array = m.data;
    if (pending) {
      data = Buffer.concat([pending, m.data]);
      pendingMembers++;
    } else {
      pendingMemberStart = pos;
      pendingMembers = 1;
      pendingAligned = true;
    }
    pos += m.length;
    const more = pos < bytes.length && skipBlank(bytes, pos) < bytes.length;
    let p = 0;
    let aligned: boolean = pendingAligned;
    pending = undefined;
    for (;;) {
      let parsed: ParsedRecord | undefined;
      try {
        parsed = parseWarcRecordAt(data, p, ropts);
      } catch (err) {
        if (more && err instanceof WarcError && err.code === 'CCP_ERR_WARC_TRUNCATED') {
          const at = skipBlank(data, p);
          pending = data.subarray(at);
          pendingAligned = aligned;
          streamOffset += at;
          break;
        }
        throw err;
      }
      if (!parsed) {
        streamOffset += data.length;
        break;
      }
      const whole = aligned && skipBlank(data, parsed.end) >= data.length;
      const raw = data.subarray(parsed.start, parsed.end);
      yield whole
        ? { offset: pendingMemberStart, length: pos - pendingMemberStart, memberPerRecord: true, compressed: true, members: pendingMembers, raw, record: parsed.record }
        : { offset: streamOffset + parsed.start, length: parsed.end - parsed.start, memberPerRecord: false, compressed: true, members: 0, raw, record: parsed.record };
      aligned = false;
      p = parsed.end;
    }
  }
  if (pending) throw new WarcError('CCP_ERR_WARC_TRUNCATED', 'file ends inside a record', { detail: { offset: pos } });
}
