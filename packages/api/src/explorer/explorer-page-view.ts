/**
 * The page view of the client script: one URL's captures from `/v1/url?include=text`, oldest first, as a timeline;
 * the chosen one (the newest unless the hash names another) with its status, language, sizes, WARC location and
 * extracted text. One request serves every capture of the URL; choosing another only re-renders.
 */
export const EXPLORER_PAGE_VIEW_SCRIPT = String.raw`
// ---- page view ----
let currentUrl = null; // the last /v1/url answer: {key, body}

function forgetUrl() { currentUrl = null; }

async function renderPageView(s, c, force) {
  const key = s.url + '\n' + (token || '');
  if (force || !currentUrl || currentUrl.key !== key) {
    const body = await api('/v1/url?url=' + encodeURIComponent(s.url) + '&include=text', c.signal);
    c.check();
    currentUrl = { key, body };
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
    ),
  )));
  if (focused) {
    const again = $('captures').querySelector('a[data-index="' + k + '"]');
    if (again) again.focus();
  }
  renderCapture(cap);
  sections.page.hidden = false;
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
    ['WARC file', el('span', { class: 'mono warc-file' }, String(w.filename))],
    ['WARC record', el('span', { class: 'mono warc-range' }, 'offset ' + NF.format(w.offset) + ', ' + plural(w.length, 'byte', 'bytes'))],
  ];
  $('capture-facts').replaceChildren(...rows.flatMap(([k, v]) => [el('dt', null, k), el('dd', null, v)]));
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
