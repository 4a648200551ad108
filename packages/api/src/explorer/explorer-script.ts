/**
 * The explorer's client script (vanilla JS, served as /explorer/app.<hash>.js). It talks only to this origin's JSON
 * API and writes API data into the DOM as text (createElement/textContent, never an HTML sink; the CSP's Trusted
 * Types would refuse one). State lives in the URL hash (`#domain=…&dataset=…&offset=…`), so Back and reload work.
 * Kept as a string so tsc ships it in dist without a copy step; serve-explorer.test.ts checks that it parses.
 */
export const EXPLORER_SCRIPT = String.raw`(() => {
'use strict';

const PAGE_SIZE = 50;
const TOKEN_KEY = 'ccpipe-explorer-token';
const STATUS_BUSY_MS = 10000;
const STATUS_IDLE_MS = 60000;
const NF = new Intl.NumberFormat('en-US');
const DF = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

// What each API error code means to someone using the page; the API's own message is shown beside it.
const MESSAGES = {
  CCP_ERR_API_DOMAIN_NOT_FOUND: (s) => 'No dataset holds ' + s.domain + '.',
  CCP_ERR_API_BAD_DOMAIN: (s) => s.domain + ' is not a domain or host name (a public suffix such as co.uk is not a domain either).',
  CCP_ERR_API_DATASET_NOT_FOUND: () => 'This domain has no URLs in that dataset.',
  CCP_ERR_API_BAD_REQUEST: () => 'The API refused the request as invalid.',
  CCP_ERR_API_UNAUTHORIZED: () => 'This API needs an access token: enter it under “Access token”.',
  CCP_ERR_API_NO_INDEX: () => 'No index is published yet; try again once the first merge is done.',
  CCP_ERR_API_INTERNAL: () => 'The API failed to answer; try again.',
  CCP_ERR_API_DATA_DAMAGED: () => 'Stored data this answer needs is damaged; the operator can find it with ccpipe verify.',
  NETWORK: () => 'The API cannot be reached.',
};

const $ = (id) => document.getElementById(id);
const main = $('main');
const q = $('q');
const errorBox = $('error');
const sections = { overview: $('overview'), domain: $('domain'), urls: $('urls') };

/** An element with attributes and children; strings become text nodes (never parsed as HTML). */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  if (attrs) {
    for (const k of Object.keys(attrs)) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

// ---- token (only when the API has an ACL) ----
let token = null;
try { token = sessionStorage.getItem(TOKEN_KEY); } catch (e) { token = null; }
function setToken(t) {
  token = t ? t : null;
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch (e) { /* storage disabled: keep it in memory */ }
  $('token-state').textContent = token ? '(set)' : '(none)';
}
setToken(token);

// ---- API ----
class ApiFailure extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

async function api(path, signal, pin) {
  const headers = { accept: 'application/json' };
  if (token) headers.authorization = 'Bearer ' + token;
  // answered from this index version while the server keeps it (410 CCP_ERR_API_VERSION_GONE after)
  if (pin) headers['x-index-version'] = pin;
  let res;
  try {
    res = await fetch(path, { headers, signal, cache: 'no-store', credentials: 'same-origin', redirect: 'error' });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiFailure(0, 'NETWORK', 'request failed');
  }
  let body = null;
  try { body = await res.json(); } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    body = null;
  }
  if (!res.ok) {
    const e = body && typeof body === 'object' ? body.error : null;
    const code = e && typeof e.code === 'string' ? e.code : 'HTTP_' + res.status;
    throw new ApiFailure(res.status, code, e && typeof e.message === 'string' ? e.message : res.statusText);
  }
  if (body === null || typeof body !== 'object') throw new ApiFailure(res.status, 'BAD_ANSWER', 'the answer is not JSON');
  return body;
}

// ---- state in the hash ----
function readState() {
  const p = new URLSearchParams(location.hash.replace(/^#/, ''));
  const ds = p.get('dataset');
  const off = p.get('offset');
  const domain = (p.get('domain') || '').trim();
  return {
    domain,
    dataset: domain && ds !== null && /^\d{1,10}$/.test(ds) ? Number(ds) : null,
    offset: off !== null && /^\d{1,15}$/.test(off) ? Number(off) : 0,
  };
}

function hashOf(s) {
  const p = new URLSearchParams();
  if (s.domain) {
    p.set('domain', s.domain);
    if (s.dataset !== null && s.dataset !== undefined) {
      p.set('dataset', String(s.dataset));
      p.set('offset', String(s.offset || 0));
    }
  }
  const h = p.toString();
  return h ? '#' + h : '';
}

function go(s) {
  const h = hashOf(s);
  if (h === location.hash || (h === '' && location.hash === '#')) render();
  else location.hash = h;
}

/** What the user typed → a host for /v1/domain: a pasted URL gives its host; a path after the host is dropped. */
function hostOf(input) {
  const v = input.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) {
    try { return new URL(v).host || v; } catch (e) { return v; }
  }
  return v.split(/[/?#]/)[0] || v;
}

// ---- formatting ----
function formatTs(ts) {
  const d = new Date(ts);
  if (typeof ts !== 'string' || Number.isNaN(d.getTime())) return String(ts);
  return DF.format(d) + ' UTC';
}

function safeHttpUrl(u) {
  try {
    const x = new URL(u);
    return x.protocol === 'http:' || x.protocol === 'https:' ? x.href : null;
  } catch (e) { return null; }
}

const urlsLabel = (n) => NF.format(n) + (n === 1 ? ' URL' : ' URLs');

// ---- rendering ----
let seq = 0;
let inflight = null;
let current = null; // the last /v1/domain answer: {key, body}

function setState(state) {
  main.dataset.state = state;
  main.setAttribute('aria-busy', state === 'loading' ? 'true' : 'false');
  if (state !== 'loading') main.dataset.rendered = location.hash;
}

function clearError() {
  errorBox.hidden = true;
  errorBox.replaceChildren();
  delete errorBox.dataset.code;
}

function showError(err, s) {
  const code = err && err.code ? err.code : 'UNKNOWN';
  const explain = MESSAGES[code];
  const text = explain ? explain(s) : 'Something went wrong.';
  errorBox.replaceChildren(
    el('p', { class: 'error-text' }, text),
    el('p', { class: 'error-code' }, el('code', null, code), err && err.status ? ' (HTTP ' + err.status + ')' : '', err && err.message ? ': ' + err.message : ''),
  );
  errorBox.dataset.code = code;
  errorBox.hidden = false;
  if (code === 'CCP_ERR_API_UNAUTHORIZED') {
    $('auth').open = true;
    $('token').focus();
  }
}

async function render(force) {
  const s = readState();
  const mine = ++seq;
  if (inflight) inflight.abort();
  const ctl = new AbortController();
  inflight = ctl;
  clearError();
  setState('loading');
  q.value = s.domain; // Back/Forward and links change the search too
  try {
    if (!s.domain) {
      sections.domain.hidden = true;
      sections.urls.hidden = true;
      await renderOverview(ctl.signal, mine);
    } else {
      sections.overview.hidden = true;
      const key = s.domain + '\n' + (token || '');
      if (force || !current || current.key !== key) {
        const body = await api('/v1/domain/' + encodeURIComponent(s.domain), ctl.signal);
        if (mine !== seq) return;
        current = { key, body };
      }
      const d = current.body;
      if (d.domain !== s.domain) {
        // show the registered domain the API answered for, without a second history entry
        const canon = Object.assign({}, s, { domain: d.domain });
        history.replaceState(null, '', hashOf(canon));
        current = { key: d.domain + '\n' + (token || ''), body: d };
        q.value = d.domain;
      }
      renderDomain(d, s.dataset);
      if (s.dataset === null) {
        sections.urls.hidden = true;
      } else {
        // pages are pinned to the version the counts above came from, so a merge published mid-walk cannot shift them
        const path = '/v1/domain/' + encodeURIComponent(d.domain) + '/datasets/' + s.dataset + '/urls?offset=' + s.offset + '&limit=' + PAGE_SIZE;
        let shown = d;
        let page;
        try {
          page = await api(path, ctl.signal, d.version);
        } catch (err) {
          if (!(err instanceof ApiFailure) || err.code !== 'CCP_ERR_API_VERSION_GONE') throw err;
          // that version is gone: start over on the current one (fresh counts, then the page)
          shown = await api('/v1/domain/' + encodeURIComponent(d.domain), ctl.signal);
          if (mine !== seq) return;
          current = { key: current.key, body: shown };
          renderDomain(shown, s.dataset);
          page = await api(path, ctl.signal, shown.version);
        }
        if (mine !== seq) return;
        renderUrls(shown, page);
      }
    }
    if (mine === seq) setState('ready');
  } catch (err) {
    if (mine !== seq || (err && err.name === 'AbortError')) return;
    if (!(err instanceof ApiFailure)) err = new ApiFailure(0, 'UNKNOWN', String(err && err.message ? err.message : err));
    if (err.code !== 'CCP_ERR_API_DATASET_NOT_FOUND' && err.code !== 'CCP_ERR_API_BAD_REQUEST') {
      sections.domain.hidden = true;
      current = null;
    }
    sections.urls.hidden = true;
    showError(err, s);
    setState('error');
  }
}

async function renderOverview(signal, mine) {
  const body = await api('/v1/datasets', signal);
  if (mine !== seq) return;
  const list = Array.isArray(body.datasets) ? body.datasets : [];
  $('overview-meta').textContent = 'Index version ' + (body.version || '?') + ' · ' + NF.format(list.length) + (list.length === 1 ? ' dataset' : ' datasets') + '. Search a domain to see which of them hold it.';
  $('overview-rows').replaceChildren(...list.map((d) => el('tr', { 'data-dataset-id': d.dataset_id },
    el('td', null, String(d.name)),
    el('td', null, d.crawl === null || d.crawl === undefined ? '' : String(d.crawl)),
    el('td', { class: 'num' }, NF.format(d.url_count)),
    el('td', { class: 'num' }, NF.format(d.domain_count)),
  )));
  sections.overview.hidden = false;
}

function datasetName(d, id) {
  const x = d.datasets.find((ds) => ds.dataset_id === id);
  return x && x.name ? x.name : 'dataset ' + id;
}

function renderDomain(d, selected) {
  $('domain-title').textContent = d.domain;
  const n = d.datasets.length;
  $('domain-meta').textContent = 'Held by ' + n + (n === 1 ? ' dataset' : ' datasets') + ' · index version ' + d.version + '. Open one to list its URLs.';
  const focusedId = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.datasetId : undefined;
  const items = d.datasets.map((ds) => {
    const a = el('a', {
      href: hashOf({ domain: d.domain, dataset: ds.dataset_id, offset: 0 }),
      'data-dataset-id': ds.dataset_id,
      'data-url-count': ds.url_count,
      'aria-current': ds.dataset_id === selected ? 'true' : null,
    }, el('span', { class: 'name' }, ds.name ? String(ds.name) : 'dataset ' + ds.dataset_id), el('span', { class: 'count' }, urlsLabel(ds.url_count)));
    return el('li', null, a);
  });
  $('datasets').replaceChildren(...items);
  if (focusedId !== undefined) {
    const again = $('datasets').querySelector('a[data-dataset-id="' + CSS.escape(focusedId) + '"]');
    if (again) again.focus();
  }
  sections.domain.hidden = false;
}

function renderUrls(d, page) {
  $('urls-title').textContent = datasetName(d, page.dataset_id) + ' · ' + d.domain;
  const first = page.offset + 1;
  const last = page.offset + page.items.length;
  const text = page.items.length > 0
    ? 'URLs ' + NF.format(first) + '–' + NF.format(last) + ' of ' + NF.format(page.total)
    : (page.total === 0 ? 'No URLs' : 'No URLs at offset ' + NF.format(page.offset) + ' (there are ' + NF.format(page.total) + ')');
  $('range').textContent = text;
  $('range-bottom').textContent = text;
  $('range').dataset.total = String(page.total);
  $('range').dataset.offset = String(page.offset);
  const prevOffset = String(Math.max(0, Math.min(page.offset, page.total) - page.limit));
  const nextOffset = page.next_offset === null ? '' : String(page.next_offset);
  for (const [prev, next] of [[$('prev'), $('next')], [$('prev-bottom'), $('next-bottom')]]) {
    const was = document.activeElement === prev ? prev : document.activeElement === next ? next : null;
    prev.disabled = page.offset === 0;
    next.disabled = page.next_offset === null;
    prev.dataset.offset = prevOffset;
    next.dataset.offset = nextOffset;
    // a button that becomes disabled drops focus to <body>: keep the keyboard user on the pager
    if (was !== null && was.disabled) {
      const other = was === next ? prev : next;
      if (!other.disabled) other.focus();
    }
  }
  $('rows').replaceChildren(...page.items.map(rowOf));
  sections.urls.hidden = false;
}

function rowOf(it) {
  const href = safeHttpUrl(it.url);
  const link = href
    ? el('a', { href, rel: 'noopener noreferrer', target: '_blank', class: 'link' }, String(it.url))
    : el('span', { class: 'link mono' }, String(it.url));
  const title = it.title === null || it.title === undefined || it.title === ''
    ? el('div', { class: 'title none' }, '(no title)')
    : el('div', { class: 'title' }, String(it.title));
  const status = it.status === null || it.status === undefined ? '—' : String(it.status);
  return el('tr', { 'data-url-id': it.url_id },
    el('td', null, title, el('div', null, link)),
    el('td', { class: 'ts' }, el('time', { datetime: it.ts }, formatTs(it.ts))),
    el('td', { class: 'num status code-' + status.charAt(0) }, status),
  );
}

// ---- pipeline status (corner) ----
let statusTimer = null;

function ingestDone(ing) {
  if (ing.done === true) return true;
  const n = (k) => (typeof ing[k] === 'number' ? ing[k] : null);
  return n('blocksPlanned') !== null && n('blocksPlanned') > 0 && n('blocksRead') >= n('blocksPlanned')
    && n('batchesPublished') !== null && (n('batchesDone') || 0) + (n('batchesFailed') || 0) >= n('batchesPublished');
}

function renderStatus(st) {
  const box = $('status');
  const parts = [el('div', { class: 'version' }, 'index ', el('strong', { id: 'status-version' }, st.version ? String(st.version) : 'none yet'))];
  const ing = st.ingest && typeof st.ingest === 'object' ? st.ingest : null;
  let done = false;
  if (ing) {
    done = ingestDone(ing);
    const planned = typeof ing.blocksPlanned === 'number' ? ing.blocksPlanned : null;
    const read = typeof ing.blocksRead === 'number' ? ing.blocksRead : null;
    const line = el('div', { class: 'ingest' }, done ? 'ingest done' : 'ingesting');
    if (planned !== null && read !== null && planned > 0) {
      line.append(' ', el('progress', { max: planned, value: Math.min(read, planned), 'aria-label': 'blocks read' }), ' ' + NF.format(read) + '/' + NF.format(planned) + ' blocks');
    }
    parts.push(line);
    const dl = el('dl');
    for (const k of Object.keys(ing).slice(0, 12)) {
      const v = ing[k];
      if (typeof v !== 'number' && typeof v !== 'string' && typeof v !== 'boolean') continue;
      dl.append(el('dt', null, k), el('dd', null, typeof v === 'number' ? NF.format(v) : String(v)));
    }
    if (dl.childElementCount > 0) parts.push(dl);
  }
  box.replaceChildren(...parts);
  box.dataset.version = st.version ? String(st.version) : '';
  return done || !ing;
}

async function refreshStatus() {
  clearTimeout(statusTimer);
  statusTimer = null;
  let wait = STATUS_BUSY_MS;
  try {
    const st = await api('/v1/status');
    if (renderStatus(st)) wait = STATUS_IDLE_MS;
  } catch (err) {
    const code = err && err.code ? err.code : 'UNKNOWN';
    $('status').replaceChildren(el('span', { class: 'muted' }, 'status unavailable (' + code + ')'));
    if (code === 'CCP_ERR_API_UNAUTHORIZED') return; // the token form calls us again
    wait = STATUS_IDLE_MS;
  }
  if (!document.hidden) statusTimer = setTimeout(refreshStatus, wait);
}

// ---- events ----
$('search').addEventListener('submit', (e) => {
  e.preventDefault();
  const host = hostOf(q.value);
  if (!host) { q.focus(); return; }
  current = null; // a new search always asks the API again
  go({ domain: host, dataset: null, offset: 0 });
});

$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const t = $('token').value.trim();
  $('token').value = '';
  setToken(t);
  current = null;
  $('auth').open = false;
  render(true);
  refreshStatus();
});

$('token-clear').addEventListener('click', () => {
  $('token').value = '';
  setToken(null);
  current = null;
  render(true);
  refreshStatus();
});

function page(which) {
  const b = $(which);
  if (b.disabled || sections.urls.hidden) return;
  const s = readState();
  if (s.dataset === null) return;
  go({ domain: s.domain, dataset: s.dataset, offset: Number(b.dataset.offset) || 0 });
}
for (const id of ['prev', 'prev-bottom']) $(id).addEventListener('click', () => page('prev'));
for (const id of ['next', 'next-bottom']) $(id).addEventListener('click', () => page('next'));

document.addEventListener('keydown', (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || (t instanceof HTMLElement && t.isContentEditable);
  if (typing) return;
  if (e.key === '/') { e.preventDefault(); q.focus(); q.select(); }
  else if (e.key === 'n') page('next');
  else if (e.key === 'p') page('prev');
});

document.addEventListener('visibilitychange', () => { if (!document.hidden && statusTimer === null) refreshStatus(); });
window.addEventListener('hashchange', () => render(false));

render(false);
refreshStatus();
if (!location.hash) q.focus();
})();
`;
