'use strict';
// URL canonicalization and key throughput on the real CDX URLs of the corpus. Reports URLs/s and
// ratios against the WHATWG parse alone (the floor every canonicalization pays), measured in one run.
const { readFileSync, readdirSync, existsSync } = require('node:fs');
const { join, resolve } = require('node:path');
const { gunzipSync } = require('node:zlib');
const core = require('@ccpipe/core');

const corpus = join(resolve(__dirname, '..'), '../shared/corpus');
function urlsOf(text) {
  const out = [];
  for (const l of text.split('\n')) {
    const i = l.indexOf('{"url": ');
    if (i >= 0) out.push(JSON.parse(l.slice(i)).url);
  }
  return out;
}
const urls = [
  ...urlsOf(readFileSync(join(corpus, 'cocrawler-cdx_toolkit/warc_by_cdx/cdx-00187'), 'utf8')),
  ...urlsOf(readFileSync(join(corpus, 'preciz-common_crawl/index_snippet'), 'utf8')),
  ...urlsOf(readFileSync(join(corpus, 'preciz-common_crawl/api_response'), 'utf8')),
];
const mirror = join(corpus, 'cc-mirror-dev/cc-index/collections');
if (existsSync(mirror)) {
  for (const c of readdirSync(mirror))
    for (const f of readdirSync(join(mirror, c, 'indexes')).filter((x) => x.endsWith('.gz')))
      urls.push(...urlsOf(gunzipSync(readFileSync(join(mirror, c, 'indexes', f))).toString('utf8')));
}

function bench(name, n, fn) {
  for (let i = 0; i < Math.min(n, 20000); i++) fn(i); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  const rate = n / s;
  console.log(`${name.padEnd(44)} ${(rate / 1e6).toFixed(3)} M/s`);
  return rate;
}

const N = 300000;
const U = urls.length;
console.log(`${U} real CDX URLs, mean length ${Math.round(urls.reduce((a, u) => a + u.length, 0) / U)} chars, ${N} ops each`);
const parse = bench('new URL() only', N, (i) => new URL(urls[i % U]));
const canon = bench('canonicalizeUrl (incl. SURT + domains)', N, (i) => core.canonicalizeUrl(urls[i % U]));
bench('surtOf', N, (i) => core.surtOf(urls[i % U]));
bench('registeredDomainOf(url)', N, (i) => core.registeredDomainOf(urls[i % U]));
const canonical = urls.map((u) => core.canonicalizeUrl(u).url);
bench('urlId(canonical url string)', N, (i) => core.urlId(canonical[i % U]));
bench('canonicalizeUrl + urlId', N, (i) => core.urlId(core.canonicalizeUrl(urls[i % U]).url));

const s100 = Array.from({ length: 1000 }, (_, i) => `https://www.example.com/${String(i).padStart(6, '0')}/`.padEnd(100, 'x'));
const b100 = s100.map((s) => Buffer.from(s));
const hs = bench('urlId 100-byte string', 2000000, (i) => core.urlId(s100[i % 1000]));
const hb = bench('urlIdOfBytes 100-byte Buffer', 2000000, (i) => core.urlIdOfBytes(b100[i % 1000]));
console.log(`ratio canonicalizeUrl / new URL: ${(canon / parse).toFixed(2)}; Buffer / string hashing: ${(hb / hs).toFixed(2)}`);

const reg = new core.Domain64Registry();
const items = urls.map((u) => {
  const c = core.canonicalizeUrl(u);
  const d = c.domain ?? c.host;
  return { suffix: d.slice(d.indexOf('.') + 1), domain: d, host: c.host, url: c.url };
});
bench('Domain64Registry.assign (mostly known urls)', N, (i) => reg.assign(items[i % U]));
