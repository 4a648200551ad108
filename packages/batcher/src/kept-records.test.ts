import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { compileFilter, parseCdxBlock, registeredDomainOf, type FilterSpecInput, type RecordFilter } from '@ccpipe/core';
import { CC_MIRROR_DEV, CORPUS, DEV_CRAWLS } from '../../../tests/support/corpus';
import { editedCdxLines } from '../../../tests/support/cdx-edits';
import { emptySummary, keptRecords, type BatcherEvents } from './batcher';
import { TargetSet } from './targets';

// keptRecords lets the filter's line gate drop lines before their records are made (#25). These tests hold it to the
// same filter without its gate — every record made, then filtered — on the same blocks: the same batch records, the same
// summary (drops by reason, bad lines, records, kept) and the same onBlock events, for several filters, with and
// without targets.

const readLines = (p: string): string[] => readFileSync(join(CORPUS, p), 'utf8').split('\n').filter((l) => l.length > 0);
const REAL = [
  ...readLines('cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'),
  ...readLines('preciz-common_crawl/index_snippet'),
  ...readLines('preciz-common_crawl/api_response'),
];

/** The alphabet of this file's edits (no ':'; a newline splits a line in two). */
const ALPHABET = ['"', '\\', ' ', ',', '{', '}', '0', '2', 'e', 'é', '\t', '\r', '\u0000', '", "', 'eng', ',eng', 'text/html', '\n'];

/** The blocks: cc-mirror-dev's shards (several gzip members each), the corpus lines, and edited lines, gzipped. */
const BLOCKS: Array<[string, Uint8Array]> = [
  ...DEV_CRAWLS.flatMap((crawl) => {
    const dir = join(CC_MIRROR_DEV, 'cc-index/collections', crawl, 'indexes');
    return readdirSync(dir).filter((f) => /^cdx-\d+\.gz$/.test(f)).map((f): [string, Uint8Array] => [`${crawl}/${f}`, readFileSync(join(dir, f))]);
  }),
  ['the corpus lines', gzipSync(`${REAL.join('\n')}\n`)],
  ['3,000 edited lines', gzipSync(`${editedCdxLines(REAL, 25, 3000, ALPHABET).join('\n')}\n`)],
  ['3,000 other edited lines', gzipSync(`${editedCdxLines(REAL, 2025, 3000, ALPHABET).join('\n')}\n`)],
];

const SPECS: Array<[string, FilterSpecInput]> = [
  ['the default (status 200, contains eng)', {}],
  ['statuses 200, 301, 302, 404, no language rule', { status: ['200', '301', '302', '404'], languages: null }],
  ['primary English or French, no status rule', { status: null, languages: { mode: 'primary', codes: ['eng', 'fra'] } }],
  ['a mime and a mime-detected list', { languages: null, mimes: ['text/html'], mimeDetected: ['text/html', 'application/xhtml+xml'] }],
  ['empty status list', { status: [] }],
  ['url regex and domain lists', { urlRegexExclude: '\\.(pdf|jpg)$', domainsDeny: ['wikipedia.org'], domainsAllow: ['wikipedia.org', 'example.com', 'github.com'] }],
  ['no rule the gate decides', { status: null, languages: null }],
];

/** keptRecords' answer: its batch records, summary and onBlock events. */
function keptOf(filter: RecordFilter, targets: TargetSet | null, gz: Uint8Array) {
  const summary = emptySummary();
  const events: unknown[] = [];
  const on: Pick<BatcherEvents, 'onBlock'> = { onBlock: (e) => events.push(e) };
  const kept = keptRecords({ targets, filter }, gz, summary, on);
  return { kept, summary, events };
}

describe('keptRecords with the filter\'s line gate answers as without it', () => {
  const targets = TargetSet.fromLines(['wikipedia.org', 'example.com', 'github.com', 'bbc.co.uk']);
  for (const [specName, spec] of SPECS) {
    test.each(BLOCKS)(`${specName}: %s, without and with targets`, (_name, gz) => {
      const filter = compileFilter(spec, { registeredDomainOf });
      // the same filter with no gate: every record is made, then filtered (the path before #25)
      const full: RecordFilter = (rec) => filter(rec);
      for (const t of [null, targets]) expect(keptOf(filter, t, gz)).toEqual(keptOf(full, t, gz));
    });
  }

  test('the gate is used: with the default filter most lines of a real block are dropped with no record made', () => {
    const filter = compileFilter({}, { registeredDomainOf });
    const gz = BLOCKS[0]![1];
    const all = parseCdxBlock(gz);
    const gated = parseCdxBlock(gz, filter.lineGate);
    expect(gated.lines).toBe(all.lines);
    expect(Object.keys(gated.dropped ?? {}).sort()).toEqual(['language', 'status']);
    // records made: the kept ones, and a few the gate cannot decide (lines outside CC's exact layout)
    expect(gated.records.length).toBeGreaterThanOrEqual(keptOf(filter, null, gz).kept.length);
    expect(gated.records.length).toBeLessThan(all.records.length / 2);
  });
});
