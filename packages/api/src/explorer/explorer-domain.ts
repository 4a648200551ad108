/**
 * The domain view of the client script: `/v1/domain/{d}` (name, Unicode beside punycode, one row per crawl with its
 * facts when the version has them, the chart) and `/v1/domain/{d}/pages` with the filter form, paged by
 * `next_cursor` with the cursors stacked in the hash (Previous pops one). The first page is pinned to the version
 * the domain answer came from; later pages are pinned by their cursor; a version collected mid-walk restarts the walk
 * on the current version with a notice. With a link graph: the rows' inlink and outlink counts, the link sorts and
 * filters, and a line from `/v1/domain/{d}/inlinks` (first page, pinned like the first rows) that opens to the pages of
 * other sites linking here; all of it left out where the version keeps no link graph.
 */
export const EXPLORER_DOMAIN_SCRIPT = String.raw`
// ---- domain view ----
let current = null; // the last /v1/domain answer: {key, body, inlinks (its /inlinks result, once asked)}
let shownInlinks; // the /inlinks result the header shows (undefined: none)
const LINK_SORTS = ['inlinks', 'outlinks'];
let lastPage = null; // the last /pages answer shown: {hash, next (its next_cursor), version}
const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'];

function forgetDomain() { current = null; }

async function renderDomainView(s, c, force) {
  const key = s.domain + '\n' + (token || '') + '\n' + (s.v || '');
  if (force || !current || current.key !== key) {
    let d;
    try {
      d = await api('/v1/domain/' + encodeURIComponent(s.domain), c.signal, s.v);
    } catch (err) {
      if (gone(err) && s.v && !c.retried) return restartWalk(s, s.v);
      throw err;
    }
    c.check();
    current = { key, body: d };
  }
  const d = current.body;
  if (d.domain !== s.domain) {
    // show the registered domain the API answered for, without a second history entry
    s = Object.assign({}, s, { domain: d.domain });
    history.replaceState(null, '', hashOf(s));
    current = { key: d.domain + '\n' + (token || '') + '\n' + (s.v || ''), body: d };
    q.value = d.domain;
  }
  renderDomainHead(d, s);
  fillFilters(d, s);
  // the rows shown stay until the next page replaces them: hiding them would drop the focus from Next to <body>
  sections.pages.hidden = false;
  let page;
  let inl;
  try {
    // a cursor pins its own version; the first page is pinned to the version the counts above came from
    [page, inl] = await Promise.all([
      api(pagesPath(d.domain, s), c.signal, s.at.length > 0 ? null : d.version),
      current.inlinks !== undefined ? current.inlinks : linksOf('/v1/domain/' + encodeURIComponent(d.domain) + '/inlinks?limit=' + LINKS_SHOWN, c.signal, d.version),
    ]);
  } catch (err) {
    if (gone(err) && !c.retried) return restartWalk(s, s.at.length > 0 && s.v ? s.v : d.version);
    throw err;
  }
  c.check();
  if (!inl.error) current.inlinks = inl; // a failure is asked again on the next render
  renderInlinks(inl);
  showLinkControls(usesLinks(s) || Boolean(inl.body) || page.items.some(hasLinkCounts));
  renderPages(d, s, page);
}

/** The walk's version is collected: back to the first page on the current version, saying why. */
function restartWalk(s, version) {
  pendingNotice = 'Index version ' + version + ' is no longer served, so the listing started again on the current version.';
  history.replaceState(null, '', hashOf(Object.assign({}, s, { at: [], v: null })));
  forgetDomain();
  return AGAIN;
}

function pagesPath(domain, s) {
  const p = new URLSearchParams();
  if (s.dataset !== null) p.set('dataset_id', String(s.dataset));
  for (const k of FILTER_KEYS) if (s[k]) p.set(k, s[k]);
  p.set('limit', String(PAGE_SIZE));
  if (s.at.length > 0) p.set('cursor', s.at[s.at.length - 1]);
  return '/v1/domain/' + encodeURIComponent(domain) + '/pages?' + p.toString();
}

function renderDomainHead(d, s) {
  const idn = typeof d.domain_unicode === 'string' && d.domain_unicode !== d.domain;
  $('domain-name').textContent = idn ? d.domain_unicode : d.domain;
  $('domain-ascii').textContent = idn ? d.domain : '';
  $('domain-ascii').hidden = !idn;
  $('domain-meta').textContent = 'Held by ' + plural(d.datasets.length, 'crawl', 'crawls') + ' · index version ' + d.version
    + (idn ? ' · punycode ' + d.domain : '') + '. Open a crawl to list its pages there.';
  const withFacts = d.datasets.some((ds) => ds.status_classes);
  $('facts-note').hidden = withFacts;
  const head = [el('th', { scope: 'col' }, 'Crawl'), el('th', { scope: 'col', class: 'num' }, 'URLs')];
  if (withFacts) {
    head.push(el('th', { scope: 'col', class: 'num' }, 'Hosts'), el('th', { scope: 'col' }, 'Status mix'), el('th', { scope: 'col' }, 'Languages'),
      el('th', { scope: 'col' }, 'Captured'), el('th', { scope: 'col', class: 'num' }, 'Size median / p90'));
  }
  $('datasets-head').replaceChildren(...head);
  const focusedId = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.datasetId : undefined;
  $('datasets').replaceChildren(...d.datasets.map((ds) => datasetRow(d, ds, s, withFacts)));
  if (focusedId !== undefined) {
    const again = $('datasets').querySelector('a[data-dataset-id="' + CSS.escape(focusedId) + '"]');
    if (again) again.focus();
  }
  // another domain's line goes at once; this domain's stays while its rows load
  renderInlinks(current.inlinks);
  sections.domain.hidden = false;
  drawChart(d, s);
}

/** "N pages of other sites link here (from M domains)", opening to the first of them; nothing without a link graph. */
function renderInlinks(inl) {
  if (inl === shownInlinks) return; // re-rendering would close the list the user opened
  shownInlinks = inl;
  const box = $('inlinks');
  if (!inl || inl.none) {
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  box.hidden = false;
  if (inl.error) {
    box.replaceChildren(el('p', { class: 'muted', id: 'inlinks-summary' }, 'The pages of other sites linking here could not be listed (' + inl.error + ').'));
    return;
  }
  const b = inl.body;
  const total = typeof b.total === 'number' ? b.total : 0;
  const doms = typeof b.linking_domains === 'number' ? b.linking_domains : 0;
  const attrs = { id: 'inlinks-summary', 'data-total': total, 'data-linking-domains': doms };
  if (total === 0) {
    box.replaceChildren(el('p', Object.assign({ class: 'muted' }, attrs), 'No page of another site links here.'));
    return;
  }
  const items = Array.isArray(b.items) ? b.items : [];
  box.replaceChildren(el('details', { id: 'inlinks-details' },
    el('summary', attrs, el('strong', { class: 'count' }, NF.format(total)), (total === 1 ? ' page of other sites links' : ' pages of other sites link') + ' here (from ' + plural(doms, 'domain', 'domains') + ')'),
    el('ol', { id: 'inlinks-list', class: 'link-list' }, ...items.map(linkItemOf)),
    total > items.length ? el('p', { class: 'muted' }, 'The first ' + NF.format(items.length) + ' of ' + NF.format(total) + '.') : null,
  ));
}

function datasetRow(d, ds, s, withFacts) {
  const selected = ds.dataset_id === s.dataset;
  const link = el('a', {
    href: hashOf(domainState(d.domain, { dataset: ds.dataset_id })),
    'data-dataset-id': ds.dataset_id, 'data-url-count': ds.url_count, 'aria-current': selected ? 'true' : null,
  }, el('span', { class: 'name' }, nameOf(ds)));
  const cells = [el('td', { 'data-label': 'Crawl' }, link), el('td', { class: 'num count', 'data-label': 'URLs' }, NF.format(ds.url_count))];
  if (withFacts) {
    const f = ds.status_classes ? ds : null;
    const mix = f ? STATUS_CLASSES.filter((k) => f.status_classes[k] > 0).map((k) => k + ' ' + NF.format(f.status_classes[k])).join(' · ') : '—';
    const langs = f && Array.isArray(f.languages) ? f.languages.slice(0, 3).map((l) => (l.code || '?') + ' ' + NF.format(l.count)).join(', ') : '';
    const span = f && f.first_ts ? formatDay(f.first_ts) + (f.last_ts && formatDay(f.last_ts) !== formatDay(f.first_ts) ? ' – ' + formatDay(f.last_ts) : '') : '—';
    cells.push(
      el('td', { class: 'num hosts', 'data-label': 'Hosts' }, f ? NF.format(f.hosts) : '—'),
      el('td', { class: 'mix', 'data-label': 'Status mix' }, mix || '—'),
      el('td', { class: 'langs', 'data-label': 'Languages' }, langs || '—'),
      el('td', { class: 'span', 'data-label': 'Captured' }, span),
      el('td', { class: 'num sizes', 'data-label': 'Size median / p90' }, f ? formatBytes(f.content_length_median) + ' / ' + formatBytes(f.content_length_p90) : '—'),
    );
  }
  return el('tr', { 'data-dataset-id': ds.dataset_id, class: selected ? 'open-row' : null }, ...cells);
}

// a click anywhere on a crawl's row opens it, as its link does (mouse users aim at the row)
$('datasets').addEventListener('click', (e) => {
  const tr = e.target instanceof Element ? e.target.closest('tr') : null;
  if (!tr || (e.target instanceof Element && e.target.closest('a'))) return;
  const a = tr.querySelector('a[data-dataset-id]');
  if (a) a.click();
});

// ---- filters ----
function fillFilters(d, s) {
  const sel = $('f-dataset');
  sel.replaceChildren(el('option', { value: '' }, 'every crawl'), ...d.datasets.map((ds) => el('option', { value: ds.dataset_id }, nameOf(ds))));
  sel.value = s.dataset === null ? '' : String(s.dataset);
  $('f-from').value = /^\d{4}-\d{2}-\d{2}$/.test(s.from) ? s.from : '';
  $('f-to').value = /^\d{4}-\d{2}-\d{2}$/.test(s.to) ? s.to : '';
  $('f-status').value = s.status;
  $('f-min').value = s.min_size;
  $('f-max').value = s.max_size;
  $('f-min-inlinks').value = s.min_inlinks;
  $('f-dead').checked = s.max_outlinks === '0';
  // the link controls as far as known before the rows come (set again with them)
  if (usesLinks(s) || (current.inlinks && current.inlinks.body)) showLinkControls(true);
  else if (current.inlinks && current.inlinks.none) showLinkControls(false);
  $('f-sort').value = s.sort || 'surt';
  $('f-order').value = s.order || 'asc';
}

const usesLinks = (s) => Boolean(s.min_inlinks || s.max_outlinks || LINK_SORTS.includes(s.sort));
const hasLinkCounts = (it) => typeof it.inlinks === 'number' || typeof it.outlinks === 'number';

/** The link filters and sorts: shown where the version has a link graph, or where the hash already uses them. */
function showLinkControls(on) {
  for (const e of document.querySelectorAll('#filters .link-filter')) e.hidden = !on;
  for (const o of document.querySelectorAll('#f-sort .link-sort')) { o.hidden = !on; o.disabled = !on; }
}

// the link sorts read most first ("most linked to"): choosing one turns the order to descending
$('f-sort').addEventListener('change', () => {
  if (LINK_SORTS.includes($('f-sort').value)) $('f-order').value = 'desc';
});

function filtersOfForm() {
  const ds = $('f-dataset').value;
  const out = { dataset: ds === '' ? null : Number(ds) };
  const vals = {
    from: $('f-from').value, to: $('f-to').value, status: $('f-status').value.replace(/\s+/g, ''), min_size: $('f-min').value, max_size: $('f-max').value,
    min_inlinks: $('f-min-inlinks').value, max_outlinks: $('f-dead').checked ? '0' : '', sort: $('f-sort').value, order: $('f-order').value,
  };
  // defaults stay out of the hash, so the plain listing keeps a short, stable address
  if (vals.sort === 'surt') vals.sort = '';
  if (vals.order === 'asc') vals.order = '';
  return Object.assign(out, vals);
}

$('filters').addEventListener('submit', (e) => {
  e.preventDefault();
  const s = readState();
  go(domainState(s.domain, filtersOfForm()));
});
$('f-clear').addEventListener('click', () => go(domainState(readState().domain)));

// ---- pages of rows ----
function renderPages(d, s, page) {
  const ds = s.dataset === null ? null : d.datasets.find((x) => x.dataset_id === s.dataset);
  $('pages-title').textContent = 'Pages ' + (ds ? 'in ' + nameOf(ds) : 'in every crawl');
  const first = s.at.length * PAGE_SIZE + 1;
  const last = first + page.items.length - 1;
  const total = typeof page.total === 'number' ? page.total : null;
  const of = total === null ? '' : ' of ' + NF.format(total);
  const text = page.items.length > 0 ? 'Rows ' + NF.format(first) + '–' + NF.format(last) + of : (total === 0 ? 'No pages match' : 'No more rows');
  for (const id of ['range', 'range-bottom']) $(id).textContent = text;
  $('range').dataset.total = total === null ? '' : String(total);
  $('range').dataset.page = String(s.at.length);
  lastPage = { hash: location.hash, next: page.next_cursor, version: page.version };
  for (const [prev, next] of [[$('prev'), $('next')], [$('prev-bottom'), $('next-bottom')]]) {
    const was = document.activeElement === prev ? prev : document.activeElement === next ? next : null;
    prev.disabled = s.at.length === 0;
    next.disabled = page.next_cursor === null;
    // a button that becomes disabled drops focus to <body>: keep the keyboard user on the pager
    if (was !== null && was.disabled) {
      const other = was === next ? prev : next;
      if (!other.disabled) other.focus();
    }
  }
  // the link columns only when the API gives counts (a version with a link graph)
  const withLinks = page.items.some(hasLinkCounts);
  for (const th of document.querySelectorAll('#pages th.links-col')) th.hidden = !withLinks;
  $('rows').replaceChildren(...page.items.map((it) => rowOf(it, withLinks)));
  $('pages-body').hidden = false;
}

function countCell(n, cls, label) {
  const known = typeof n === 'number';
  return el('td', { class: 'num ' + cls, 'data-label': label, 'data-count': known ? n : null }, known ? NF.format(n) : '—');
}

function rowOf(it, withLinks) {
  const title = it.title === null || it.title === undefined || it.title === '' ? null : String(it.title);
  const open = el('a', { href: hashOf(pageState(it.url)), class: 'open title' + (title === null ? ' none' : '') }, title === null ? '(no title)' : title);
  const status = statusText(it.status);
  return el('tr', { 'data-url-id': it.url_id, 'data-dataset-id': it.dataset_id },
    el('td', { class: 'page-cell' }, open, el('div', null, outLink(it.url, 'link'))),
    el('td', { class: 'crawl', 'data-label': 'Crawl' }, it.dataset ? String(it.dataset) : 'dataset ' + it.dataset_id),
    el('td', { class: 'ts', 'data-label': 'Captured' }, el('time', { datetime: it.ts }, formatTs(it.ts))),
    el('td', { class: 'num status code-' + status.charAt(0), 'data-label': 'Status' }, status),
    el('td', { class: 'num size', 'data-label': 'Size', 'data-bytes': it.content_length === null ? null : it.content_length }, formatBytes(it.content_length)),
    el('td', { class: 'lang', 'data-label': 'Language' }, it.language ? String(it.language) : '—'),
    withLinks ? countCell(it.inlinks, 'inlinks', 'Inlinks') : null,
    withLinks ? countCell(it.outlinks, 'outlinks', 'Outlinks') : null,
  );
}

/** Next pushes the page's next_cursor on the stack (with the version it belongs to); Previous pops one. */
function turnPage(which) {
  const b = $(which);
  if (b.disabled || sections.pages.hidden || $('pages-body').hidden) return;
  const s = readState();
  if (which === 'next') {
    if (!lastPage || lastPage.hash !== location.hash || !lastPage.next) return;
    go(Object.assign({}, s, { at: s.at.concat([lastPage.next]), v: lastPage.version }));
  } else if (s.at.length > 0) {
    go(Object.assign({}, s, { at: s.at.slice(0, -1) }));
  }
}
for (const id of ['prev', 'prev-bottom']) $(id).addEventListener('click', () => turnPage('prev'));
for (const id of ['next', 'next-bottom']) $(id).addEventListener('click', () => turnPage('next'));
`;
