/**
 * The page view of the client script: one URL's captures from `/v1/url?include=text`, oldest first, as a timeline;
 * the chosen one (the newest unless the hash names another) with its status, language, sizes, WARC location and
 * extracted text. One request serves every capture of the URL; choosing another only re-renders. With a link graph:
 * each capture's inlink and outlink counts, and the first pages linking here and the first outlinks (`/v1/url/links`,
 * every crawl, pinned to the captures' version), each opening its page view; left out where there is no link graph.
 */
export const EXPLORER_PAGE_VIEW_SCRIPT = String.raw`
// ---- page view ----
let currentUrl = null; // the last /v1/url answer: {key, body, links: {in, out}}
const LINKS_SHOWN = 20; // linking pages and outlinks listed (the first page of each)

function forgetUrl() { currentUrl = null; }

/** A link route's first page as {body}, {none} (404 CCP_ERR_API_NO_LINKS: no link graph) or {error: code}; never throws but to abort. */
async function linksOf(path, signal, pin) {
  try {
    return { body: await api(path, signal, pin) };
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    if (err instanceof ApiFailure && err.code === 'CCP_ERR_API_NO_LINKS') return { none: true };
    return { error: err && err.code ? String(err.code) : 'UNKNOWN' };
  }
}

/** One linking page or outlink: its URL opening its page view, then its crawl (and capture time when given). */
function linkItemOf(it) {
  const meta = [' · ', el('span', { class: 'crawl' }, it.dataset ? String(it.dataset) : 'dataset ' + it.dataset_id)];
  if (it.ts) meta.push(' · ', el('time', { datetime: it.ts }, formatTs(it.ts)));
  return el('li', { 'data-url': it.url, 'data-dataset-id': it.dataset_id },
    el('a', { href: hashOf(pageState(it.url)), class: 'open' }, String(it.url)),
    el('span', { class: 'link-meta' }, ...meta));
}

async function renderPageView(s, c, force) {
  const key = s.url + '\n' + (token || '');
  if (force || !currentUrl || currentUrl.key !== key) {
    const body = await api('/v1/url?url=' + encodeURIComponent(s.url) + '&include=text', c.signal);
    c.check();
    // pinned to the captures' version, so the lists agree with their counts
    const [inl, outl] = await Promise.all(['in', 'out'].map((dir) =>
      linksOf('/v1/url/links?url=' + encodeURIComponent(body.url) + '&direction=' + dir + '&limit=' + LINKS_SHOWN, c.signal, body.version)));
    c.check();
    currentUrl = { key, body, links: { in: inl, out: outl } };
  }
  const body = currentUrl.body;
  const caps = Array.isArray(body.captures) ? body.captures : [];
  const k = s.capture !== null && s.capture < caps.length ? s.capture : caps.length - 1;
  const cap = caps[k];
  const title = cap && cap.title ? String(cap.title) : null;
  $('page-title').textContent = title === null ? '(no title)' : title;
  $('page-title').classList.toggle('none', title === null);
  $('page-url').replaceChildren(outLink(body.url, 'link'));
  const crawls = new Set(caps.map((x) => x.dataset_id)).size;
  $('page-meta').replaceChildren(
    'Domain ', el('a', { href: hashOf(domainState(body.domain)), id: 'page-domain' }, String(body.domain)),
    ' · ' + plural(caps.length, 'capture', 'captures') + ' in ' + plural(crawls, 'crawl', 'crawls') + ' · index version ' + body.version,
  );
  const focused = document.activeElement && document.activeElement.closest ? document.activeElement.closest('#captures a') : null;
  $('captures').replaceChildren(...caps.map((x, i) => el('li', { class: i === k ? 'chosen' : null },
    el('a', { href: hashOf(pageState(body.url, i)), 'aria-current': i === k ? 'true' : null, 'data-index': i, 'data-dataset-id': x.dataset_id },
      el('time', { datetime: x.ts }, formatTs(x.ts)),
      el('span', { class: 'crawl' }, x.dataset ? String(x.dataset) : 'dataset ' + x.dataset_id),
      el('span', { class: 'status code-' + statusText(x.status).charAt(0) }, 'HTTP ' + statusText(x.status)),
      x.language ? el('span', { class: 'lang' }, String(x.language)) : null,
      typeof x.inlinks === 'number' && typeof x.outlinks === 'number'
        ? el('span', { class: 'links', 'data-inlinks': x.inlinks, 'data-outlinks': x.outlinks, title: 'pages of this crawl linking here · outlinks' }, NF.format(x.inlinks) + ' in · ' + NF.format(x.outlinks) + ' out')
        : null,
    ),
  )));
  if (focused) {
    const again = $('captures').querySelector('a[data-index="' + k + '"]');
    if (again) again.focus();
  }
  renderCapture(cap);
  renderPageLinks(currentUrl.links);
  sections.page.hidden = false;
}

/** The pages linking here and the outlinks, the first of each over every crawl; nothing without a link graph. */
function renderPageLinks(links) {
  $('page-links').hidden = links.in.none && links.out.none;
  const lists = [['in', 'Linked from', 'page', 'pages'], ['out', 'Links to', 'URL', 'URLs']];
  for (const [dir, label, one, many] of lists) {
    const r = links[dir];
    const title = $('links-' + dir + '-title');
    const items = r.body && Array.isArray(r.body.items) ? r.body.items : [];
    const total = r.body && typeof r.body.total === 'number' ? r.body.total : null;
    $('links-' + dir).hidden = Boolean(r.none);
    title.textContent = r.error ? label + ': not listed (' + r.error + ')' : label + ' ' + plural(total === null ? 0 : total, one, many) + ' (every crawl)';
    title.dataset.total = total === null ? '' : String(total);
    $('links-' + dir + '-list').replaceChildren(...items.map(linkItemOf));
    const more = $('links-' + dir + '-more');
    more.hidden = total === null || total <= items.length;
    more.textContent = more.hidden ? '' : 'The first ' + NF.format(items.length) + ' of ' + NF.format(total) + '.';
  }
}

function renderCapture(cap) {
  $('capture-title').textContent = 'Capture of ' + formatTs(cap.ts);
  const w = cap.warc || {};
  const rows = [
    ['Crawl', cap.dataset ? String(cap.dataset) : 'dataset ' + cap.dataset_id],
    ['Captured (UTC)', el('time', { datetime: cap.ts }, formatTs(cap.ts))],
    ['HTTP status', statusText(cap.status)],
    ['Language', cap.language ? String(cap.language) : 'unknown'],
    ['Response size', typeof cap.content_length === 'number' ? formatBytes(cap.content_length) + ' (' + plural(cap.content_length, 'byte', 'bytes') + ')' : 'unknown'],
    ['Text length', typeof cap.text_length === 'number' ? plural(cap.text_length, 'character', 'characters') : cap.text_dropped ? 'not kept: only the newest ' + plural(currentUrl.body.text_versions, 'capture keeps', 'captures keep') + ' its text' : 'no text'],
    typeof cap.inlinks === 'number' ? ['Linked from', plural(cap.inlinks, 'page', 'pages') + ' of this crawl'] : null,
    typeof cap.outlinks === 'number' ? ['Links to', plural(cap.outlinks, 'URL', 'URLs')] : null,
    ['WARC file', el('span', { class: 'mono warc-file' }, String(w.filename))],
    ['WARC record', el('span', { class: 'mono warc-range' }, 'offset ' + NF.format(w.offset) + ', ' + plural(w.length, 'byte', 'bytes'))],
  ];
  $('capture-facts').replaceChildren(...rows.filter(Boolean).flatMap(([k, v]) => [el('dt', null, k), el('dd', null, v)]));
  const text = typeof cap.text === 'string' ? cap.text : null;
  $('capture-text').textContent = text === null ? '' : text;
  $('capture-text').hidden = text === null || text === '';
  $('text-note').textContent = cap.text_dropped ? '(not kept for this capture: the index keeps the newest texts of a page only; the WARC record has it)' : text === null || text === '' ? '(none for this capture)' : cap.text_truncated ? '(cut at 1 MiB)' : '';
}

/** n / p: the newer or older capture of the page shown. */
function stepCapture(delta) {
  if (sections.page.hidden || !currentUrl) return;
  const s = readState();
  const n = Array.isArray(currentUrl.body.captures) ? currentUrl.body.captures.length : 0;
  const k = s.capture !== null && s.capture < n ? s.capture : n - 1;
  const to = k + delta;
  if (to < 0 || to >= n) return;
  go(pageState(s.url, to));
}
`;
