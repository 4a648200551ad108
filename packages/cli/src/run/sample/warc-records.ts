import { sha1Base32 } from '@ccpipe/core';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

/** One HTTP exchange to record: what a crawler fetched at `date`. */
export interface Capture {
  url: string;
  /** UTC capture time. */
  date: Date;
  status: number;
  /** HTTP response headers in order (Content-Length is added). */
  headers: [string, string][];
  body: Buffer;
}

const REASONS: Record<number, string> = { 200: 'OK', 301: 'Moved Permanently', 404: 'Not Found' };

export { sha1Base32 };

/** A record id derived from the content, so the same input always gives the same file. */
function recordId(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\n')).digest('hex');
  return `<urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}>`;
}

const warcDate = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

function member(headers: [string, string][], block: Buffer): Buffer {
  const head = ['WARC/1.0', ...headers.map(([k, v]) => `${k}: ${v}`), `Content-Length: ${block.length}`, '', ''].join('\r\n');
  // One gzip member per record, as Common Crawl writes them; level 9 and no mtime keep the bytes deterministic.
  return gzipSync(Buffer.concat([Buffer.from(head, 'utf8'), block, Buffer.from('\r\n\r\n')]), { level: 9 });
}

/** The `warcinfo` record that opens a file. */
export function warcinfoMember(filename: string, date: Date, fields: Record<string, string>): Buffer {
  const block = Buffer.from(Object.entries(fields).map(([k, v]) => `${k}: ${v}\r\n`).join(''), 'utf8');
  return member(
    [
      ['WARC-Type', 'warcinfo'],
      ['WARC-Date', warcDate(date)],
      ['WARC-Filename', filename],
      ['WARC-Record-ID', recordId('warcinfo', filename)],
      ['Content-Type', 'application/warc-fields'],
    ],
    block,
  );
}

/** A `request` record and its `response` record, headed like Common Crawl's (WARC/1.0, sha1 digests, IP address). */
export function exchangeMembers(c: Capture, warcinfoId: string): Buffer[] {
  const target = c.url;
  const date = warcDate(c.date);
  const u = new URL(c.url);
  const reqBlock = Buffer.from(
    `GET ${u.pathname}${u.search} HTTP/1.1\r\nUser-Agent: ccpipe-sample/1.0\r\nAccept: text/html,*/*;q=0.8\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`,
    'latin1',
  );
  const reqId = recordId('request', target, date);
  const httpHead = Buffer.from(
    [`HTTP/1.1 ${c.status} ${REASONS[c.status] ?? 'Status'}`, ...c.headers.map(([k, v]) => `${k}: ${v}`), `Content-Length: ${c.body.length}`, '', ''].join('\r\n'),
    'latin1',
  );
  const respBlock = Buffer.concat([httpHead, c.body]);
  return [
    member(
      [
        ['WARC-Type', 'request'],
        ['WARC-Date', date],
        ['WARC-Record-ID', reqId],
        ['Content-Type', 'application/http; msgtype=request'],
        ['WARC-Warcinfo-ID', warcinfoId],
        ['WARC-IP-Address', '192.0.2.10'],
        ['WARC-Target-URI', target],
        ['WARC-Block-Digest', `sha1:${sha1Base32(reqBlock)}`],
      ],
      reqBlock,
    ),
    member(
      [
        ['WARC-Type', 'response'],
        ['WARC-Date', date],
        ['WARC-Record-ID', recordId('response', target, date)],
        ['Content-Type', 'application/http; msgtype=response'],
        ['WARC-Warcinfo-ID', warcinfoId],
        ['WARC-Concurrent-To', reqId],
        ['WARC-IP-Address', '192.0.2.10'],
        ['WARC-Target-URI', target],
        ['WARC-Payload-Digest', `sha1:${sha1Base32(c.body)}`],
        ['WARC-Block-Digest', `sha1:${sha1Base32(respBlock)}`],
        ['WARC-Identified-Payload-Type', c.headers.find(([k]) => k.toLowerCase() === 'content-type')?.[1].split(';')[0] ?? 'application/octet-stream'],
      ],
      respBlock,
    ),
  ];
}

/** A whole WARC file: warcinfo, then request + response per capture. */
export function warcFile(filename: string, date: Date, captures: readonly Capture[]): Buffer {
  const info = warcinfoMember(filename, date, {
    software: 'ccpipe-sample/1.0 (synthetic pages)',
    format: 'WARC File Format 1.0',
    isPartOf: filename.replace(/-\d{14}-\d{5}\.warc\.gz$/, ''),
    description: 'Synthetic pages written by the ccpipe sample generator; no third-party content.',
  });
  const infoId = recordId('warcinfo', filename);
  return Buffer.concat([info, ...captures.flatMap((c) => exchangeMembers(c, infoId))]);
}
