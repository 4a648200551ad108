// CI helper of .ci/compose-smoke: compares the API's URL count of every (domain, crawl) with the mirror's oracle.
//   node check-index.mjs <api base URL> <oracle.json>
// Prints one JSON line {version, pairs, domains} and exits 0 when every count matches, the dataset names are exactly
// the oracle's crawls, every answer comes from one index version and no domain has a dataset the oracle lacks;
// otherwise prints each difference on stderr and exits 1.
import { readFileSync } from 'node:fs';

const [base, oraclePath] = process.argv.slice(2);
if (!base || !oraclePath) {
  console.error('usage: check-index.mjs <api base URL> <oracle.json>');
  process.exit(2);
}
const oracle = JSON.parse(readFileSync(oraclePath, 'utf8'));
const crawls = Object.keys(oracle.crawls).sort();

const get = async (path) => {
  const res = await fetch(new URL(path, base), { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET ${path}: HTTP ${res.status}`);
  return { version: res.headers.get('x-index-version'), body: await res.json() };
};

const problems = [];
const versions = new Set();
const { version, body: ds } = await get('/v1/datasets');
versions.add(version);
const crawlOf = new Map(ds.datasets.map((d) => [d.dataset_id, d.name]));
const names = [...crawlOf.values()].sort();
if (names.join() !== crawls.join()) problems.push(`datasets ${JSON.stringify(names)}, expected ${JSON.stringify(crawls)}`);

const want = new Map();
for (const crawl of crawls) {
  for (const [domain, d] of Object.entries(oracle.crawls[crawl].domains)) want.set(domain, { ...want.get(domain), [crawl]: d.count });
}
let pairs = 0;
for (const [domain, expected] of want) {
  const { version: v, body } = await get(`/v1/domain/${encodeURIComponent(domain)}`);
  versions.add(v);
  const got = Object.fromEntries(body.datasets.map((d) => [crawlOf.get(d.dataset_id) ?? `dataset ${d.dataset_id}`, d.url_count]));
  for (const crawl of new Set([...Object.keys(expected), ...Object.keys(got)])) {
    pairs++;
    if (got[crawl] !== expected[crawl]) problems.push(`${domain} ${crawl}: ${got[crawl] ?? 'absent'}, expected ${expected[crawl] ?? 'absent'}`);
  }
}
if (versions.size !== 1) problems.push(`answers from several index versions: ${[...versions].join(', ')}`);
if (problems.length > 0) {
  for (const p of problems) console.error(`count mismatch: ${p}`);
  console.error(`${problems.length} difference(s) over ${pairs} (domain, crawl) pairs`);
  process.exit(1);
}
console.log(JSON.stringify({ version, pairs, domains: want.size }));
