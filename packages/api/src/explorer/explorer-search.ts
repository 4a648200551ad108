/**
 * The full-text search of the client script: the "Full text" box (global, or only the domain in view when its box
 * is ticked) and the results view, `/v1/search` a page at a time, paged by `next_cursor` with the cursors stacked in
 * the hash as the domain view stacks them (Previous pops one). A hit shows its title (the URL when it has none)
 * opening its page view, the URL, the crawl, the capture time and the snippet built from `snippet_parts` as text
 * nodes with `<mark>` around the matched words; the answer's HTML `snippet` is never used. A cursor whose version is
 * collected starts the search again on the current version with a notice.
 */
export const EXPLORER_SEARCH_SCRIPT = String.raw`
// ---- full-text search ----
const SEARCH_PAGE_SIZE = 20;
const fq = $('fq');
let lastSearch = null; // the last /v1/search answer shown: {hash, next (its next_cursor), version}

const searchState = (text, domain, dataset, extra) => Object.assign({ view: 'search', q: text, domain: domain || '', dataset: dataset === undefined ? null : dataset, at: [], v: null }, extra || {});

/** The domain a text search may be narrowed to: the domain view's, or the scope of the search shown. */
const scopeOf = (s) => (s.view === 'domain' || s.view === 'search' ? s.domain : '');

/** The box follows the view: the query of the search shown, and "only in <domain>" where a domain is in view. */
function syncTextSearch(s) {
  if (s.view === 'search') fq.value = s.q;
  $('fq-domain').checked = s.view === 'search' && Boolean(s.domain);
  labelScope(s);
}
function labelScope(s) {
  const d = scopeOf(s);
  $('fq-scope').hidden = !d;
  $('fq-domain-name').textContent = d;
}

$('fts').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = fq.value.trim();
  if (!text) { fq.focus(); return; }
  const s = readState();
  const d = scopeOf(s);
  const narrow = Boolean(d) && $('fq-domain').checked;
  // a new query keeps the crawl chosen among the results; the domain only while its box is ticked
  go(searchState(text, narrow ? d : '', s.view === 'search' ? s.dataset : null));
});

function searchPath(s) {
  const p = new URLSearchParams();
  p.set('q', s.q);
  if (s.domain) p.set('domain', s.domain);
  if (s.dataset !== null) p.set('dataset_id', String(s.dataset));
  p.set('limit', String(SEARCH_PAGE_SIZE));
  if (s.at.length > 0) p.set('cursor', s.at[s.at.length - 1]);
  return '/v1/search?' + p.toString();
}

/** The crawls to narrow to; null when the list cannot be had (the results are shown without it). */
async function crawlsForSearch(signal) {
  try {
    const body = await api('/v1/datasets', signal);
    return Array.isArray(body.datasets) ? body.datasets : null;
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    return null;
  }
}

async function renderSearchView(s, c) {
  let body;
  let crawls;
  try {
    // a cursor pins the version its first page came from
    [body, crawls] = await Promise.all([api(searchPath(s), c.signal), crawlsForSearch(c.signal)]);
  } catch (err) {
    if (gone(err) && s.at.length > 0 && !c.retried) return restartSearch(s);
    throw err;
  }
  c.check();
  if (s.domain && typeof body.domain === 'string' && body.domain !== s.domain) {
    // show the registered domain the API searched, without a second history entry
    s = Object.assign({}, s, { domain: body.domain });
    history.replaceState(null, '', hashOf(s));
    q.value = body.domain;
    labelScope(s);
  }
  renderResults(s, body, crawls);
}

/** The walk's version is collected: back to the first page on the current version, saying why. */
function restartSearch(s) {
  pendingNotice = 'Index version ' + (s.v || 'of these results') + ' is no longer served, so the search started again on the current version.';
  history.replaceState(null, '', hashOf(Object.assign({}, s, { at: [], v: null })));
  return AGAIN;
}

function renderResults(s, body, crawls) {
  const items = Array.isArray(body.items) ? body.items : [];
  const total = typeof body.total === 'number' ? body.total : null;
  const exact = body.total_exact !== false;
  $('results-title').textContent = 'Search: ' + String(body.q);
  const count = $('search-total');
  count.textContent = total === null ? '' : total === 0 ? 'No results' : (exact ? '' : 'About ') + plural(total, 'result', 'results');
  count.dataset.total = total === null ? '' : String(total);
  count.dataset.exact = String(exact);
  $('search-meta').textContent = (items.length > 0 ? ', best first' : '') + ' · index version ' + body.version;
  renderScope(s, body, crawls);

  const first = s.at.length * SEARCH_PAGE_SIZE + 1;
  const last = first + items.length - 1;
  const text = items.length > 0 ? 'Results ' + NF.format(first) + '–' + NF.format(last) + (total === null ? '' : ' of ' + (exact ? '' : 'about ') + NF.format(total)) : '';
  for (const id of ['search-range', 'search-range-bottom']) $(id).textContent = text;
  $('search-range').dataset.page = String(s.at.length);
  lastSearch = { hash: location.hash, next: body.next_cursor, version: body.version };
  const pagers = [[$('search-prev'), $('search-next')], [$('search-prev-bottom'), $('search-next-bottom')]];
  for (const [prev, next] of pagers) {
    const was = document.activeElement === prev ? prev : document.activeElement === next ? next : null;
    prev.disabled = s.at.length === 0;
    next.disabled = body.next_cursor === null;
    // a button that becomes disabled drops focus to <body>: keep the keyboard user on the pager
    if (was !== null && was.disabled) {
      const other = was === next ? prev : next;
      if (!other.disabled) other.focus();
    }
    prev.parentElement.hidden = s.at.length === 0 && body.next_cursor === null;
  }

  const empty = $('search-empty');
  empty.hidden = items.length > 0;
  empty.textContent = items.length > 0 ? ''
    : s.at.length > 0 ? 'No more results.'
    : 'No page matches ' + String(body.q) + (body.domain || s.dataset !== null ? ' here: search every domain and crawl, or use fewer words.' : ': check the spelling, or use fewer words.');
  // paging stops at the API's window (the 1,000th hit): say so rather than end silently
  const capped = body.next_cursor === null && total !== null && items.length > 0 && last < total;
  $('search-capped').hidden = !capped;
  $('search-capped').textContent = capped ? 'A search lists its first ' + NF.format(last) + ' results: narrow it (a domain, a crawl, a "phrase") to reach the rest.' : '';
  $('hits').start = first;
  $('hits').replaceChildren(...items.map(hitOf));
  $('results-body').hidden = false;
  sections.results.hidden = false;
}

/** Where the search looks: every crawl or one (links), and the domain with a way out of it. */
function renderScope(s, body, crawls) {
  const parts = [];
  if (crawls && crawls.length > 0) {
    const link = (id, label) => el('a', { href: hashOf(searchState(s.q, s.domain, id)), 'aria-current': s.dataset === id ? 'true' : null, 'data-dataset-id': id === null ? 'all' : id }, label);
    parts.push(el('span', { class: 'facet', id: 'search-crawls' }, 'Crawl: ', link(null, 'every crawl'), ...crawls.flatMap((d) => [' · ', link(d.dataset_id, nameOf(d))])));
  }
  if (body.domain) {
    parts.push(el('span', { class: 'facet' }, 'Domain: ',
      el('a', { href: hashOf(domainState(body.domain)), id: 'search-domain' }, String(body.domain)),
      ' (', el('a', { href: hashOf(searchState(s.q, '', s.dataset)), id: 'search-everywhere' }, 'search every domain'), ')'));
  }
  $('search-scope').replaceChildren(...parts);
  $('search-scope').hidden = parts.length === 0;
}

/** One hit: title opening its page view, the URL, the snippet (text nodes, <mark> for matched words), crawl and time. */
function hitOf(it) {
  const title = it.title === null || it.title === undefined || it.title === '' ? null : String(it.title);
  return el('li', { class: 'hit', 'data-url': it.url, 'data-dataset-id': it.dataset_id },
    el('h3', { class: 'hit-title' }, el('a', { href: hashOf(pageState(it.url)), class: 'open title' + (title === null ? ' bare' : '') }, title === null ? String(it.url) : title)),
    el('div', { class: 'hit-url' }, outLink(it.url, 'link')),
    el('p', { class: 'snippet' }, ...snippetOf(it.snippet_parts)),
    el('p', { class: 'hit-meta muted' },
      el('span', { class: 'crawl' }, it.dataset ? String(it.dataset) : 'dataset ' + it.dataset_id), ' · ',
      el('time', { datetime: it.ts }, formatTs(it.ts))),
  );
}

function snippetOf(parts) {
  if (!Array.isArray(parts)) return [];
  return parts.filter((p) => p && typeof p.text === 'string').map((p) => (p.hit ? el('mark', null, p.text) : p.text));
}

/** Next pushes the answer's next_cursor on the stack (with the version it belongs to); Previous pops one. */
function turnSearchPage(which) {
  const b = $('search-' + which);
  if (b.disabled || sections.results.hidden || $('results-body').hidden) return;
  const s = readState();
  if (which === 'next') {
    if (!lastSearch || lastSearch.hash !== location.hash || !lastSearch.next) return;
    go(Object.assign({}, s, { at: s.at.concat([lastSearch.next]), v: lastSearch.version }));
  } else if (s.at.length > 0) {
    go(Object.assign({}, s, { at: s.at.slice(0, -1) }));
  }
}
for (const id of ['search-prev', 'search-prev-bottom']) $(id).addEventListener('click', () => turnSearchPage('prev'));
for (const id of ['search-next', 'search-next-bottom']) $(id).addEventListener('click', () => turnSearchPage('next'));
`;
