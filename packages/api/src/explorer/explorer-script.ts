import { EXPLORER_CHART_SCRIPT } from './explorer-chart';
import { EXPLORER_DOMAIN_SCRIPT } from './explorer-domain';
import { EXPLORER_HOME_SCRIPT } from './explorer-home';
import { EXPLORER_PAGE_VIEW_SCRIPT } from './explorer-page-view';
import { EXPLORER_SEARCH_SCRIPT } from './explorer-search';
import { EXPLORER_STATUS_SCRIPT } from './explorer-status';

/**
 * The shared part of the client script: DOM helpers, the API client, the state in the URL hash, errors and the
 * render loop that dispatches to a view. The views live in their own modules (home, domain, chart, page view,
 * full-text search, status corner); all of them run in one closure, so they share these functions.
 */
const CORE = String.raw`
const PAGE_SIZE = 50;
const TOKEN_KEY = 'ccpipe-explorer-token';
const NF = new Intl.NumberFormat('en-US');
const DF = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
const DAY = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', year: 'numeric', month: 'short', day: '2-digit' });
// split so the script holds no literal remote URL (serve-explorer.test.ts looks for one)
const SVG_NS = 'http:' + '//www.w3.org/2000/svg';

// What each API error code means to someone using the page; the API's own message is shown beside it.
const MESSAGES = {
  CCP_ERR_API_DOMAIN_NOT_FOUND: (s) => 'No dataset holds ' + s.domain + '.',
  CCP_ERR_API_BAD_DOMAIN: (s) => s.domain + ' is not a domain or host name (a public suffix such as co.uk is not a domain either).',
  CCP_ERR_API_DATASET_NOT_FOUND: (s) => (s.view === 'search' ? 'That crawl is not in this index.' : 'This domain has no URLs in that crawl.'),
  CCP_ERR_API_URL_NOT_FOUND: () => 'No crawl holds a capture of this URL. Search its host to see the pages its domain has.',
  CCP_ERR_API_BAD_URL: () => 'That is not an absolute http(s) URL.',
  CCP_ERR_API_BAD_REQUEST: (s, err) => (s.view === 'search'
    ? 'The API refused this page of results; search again from the first page.'
    : err && err.param && PARAM_LABELS[err.param]
      ? 'The filter “' + PARAM_LABELS[err.param] + '” was refused; change it and apply again.'
      : 'The API refused the request as invalid.'),
  CCP_ERR_API_BAD_SEARCH: (s, err) => 'That search cannot be run: ' + (err && err.message ? err.message : 'the API refused the query') + '. Change it and search again.',
  CCP_ERR_API_SEARCH_TIMEOUT: () => 'The search took too long: try again, or narrow it (a domain, a crawl, a "phrase").',
  CCP_ERR_API_NO_SEARCH: () => 'This index version has no full-text search.',
  CCP_ERR_API_UNAUTHORIZED: () => 'This API needs an access token: enter it under “Access token”.',
  CCP_ERR_API_NO_INDEX: () => 'No index is published yet; try again once the first merge is done.',
  CCP_ERR_API_VERSION_GONE: () => 'The index version these results came from is no longer served.',
  CCP_ERR_API_INTERNAL: () => 'The API failed to answer; try again.',
  CCP_ERR_API_DATA_DAMAGED: () => 'Stored data this answer needs is damaged; the operator can find it with ccpipe verify.',
  NETWORK: () => 'The API cannot be reached.',
};
// /pages parameter → the form's words for it (a 400 names the parameter at fault)
const PARAM_LABELS = { dataset_id: 'Crawl', from: 'Captured from', to: 'before', status: 'Status', min_size: 'Min size', max_size: 'Max size', min_inlinks: 'Min inlinks', max_outlinks: 'Dead ends', sort: 'Sort by', order: 'Order', cursor: 'page position' };

const $ = (id) => document.getElementById(id);
const main = $('main');
const q = $('q');
const errorBox = $('error');
const noticeBox = $('notice');
const sections = { overview: $('overview'), top: $('top'), domain: $('domain'), pages: $('pages'), page: $('page'), results: $('results') };
const VIEW_SECTIONS = { home: ['overview'], crawl: ['overview', 'top'], domain: ['domain', 'pages'], page: ['page'], search: ['results'] };

/** An element with attributes and children; strings become text nodes (never parsed as HTML). */
function el(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}
/** The same in the SVG namespace (the chart). */
function svg(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}
function fill(e, attrs, children) {
  if (attrs) {
    for (const k of Object.keys(attrs)) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.setAttribute('class', v);
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
  constructor(status, code, message, param) { super(message); this.status = status; this.code = code; this.param = param || null; }
}
const gone = (err) => err instanceof ApiFailure && err.code === 'CCP_ERR_API_VERSION_GONE';

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
    const param = e && e.detail && typeof e.detail.param === 'string' ? e.detail.param : null;
    throw new ApiFailure(res.status, code, e && typeof e.message === 'string' ? e.message : res.statusText, param);
  }
  if (body === null || typeof body !== 'object') throw new ApiFailure(res.status, 'BAD_ANSWER', 'the answer is not JSON');
  return body;
}

// ---- state in the hash ----
// view (home | crawl | domain | page | search), domain, dataset, the /pages filters, at (the cursor stack, '.'-joined:
// base64url has no '.'), v (the version the stacked cursors belong to), url and capture (page view), q (search: the
// query as typed; domain and dataset narrow it)
const FILTER_KEYS = ['from', 'to', 'status', 'min_size', 'max_size', 'min_inlinks', 'max_outlinks', 'sort', 'order'];
const VIEWS = ['home', 'crawl', 'domain', 'page', 'search'];

function readState() {
  const p = new URLSearchParams(location.hash.replace(/^#/, ''));
  const get = (k) => (p.get(k) || '').trim();
  const ds = get('dataset');
  const cap = get('capture');
  const s = {
    view: get('view'), domain: get('domain'), url: get('url'), q: get('q'),
    dataset: /^\d{1,10}$/.test(ds) ? Number(ds) : null,
    capture: /^\d{1,6}$/.test(cap) ? Number(cap) : null,
    at: get('at') ? get('at').split('.').filter((c) => /^[A-Za-z0-9_-]+$/.test(c)) : [],
    v: get('v') || null,
  };
  for (const k of FILTER_KEYS) s[k] = get(k);
  // older bookmarks (#domain=…&dataset=…&offset=…) carry no view: the keys say which
  if (!VIEWS.includes(s.view)) s.view = s.url ? 'page' : s.domain ? 'domain' : s.dataset !== null ? 'crawl' : 'home';
  if (s.view === 'domain' && !s.domain) s.view = 'home';
  if (s.view === 'page' && !s.url) s.view = 'home';
  if (s.view === 'crawl' && s.dataset === null) s.view = 'home';
  if (s.view === 'search' && !s.q) s.view = 'home';
  if (s.at.length === 0) s.v = null;
  return s;
}

function hashOf(s) {
  const p = new URLSearchParams();
  if (s.view === 'home' || !s.view) return '';
  p.set('view', s.view);
  if (s.view === 'crawl') p.set('dataset', String(s.dataset));
  if (s.view === 'page') {
    p.set('url', s.url);
    if (s.capture !== null && s.capture !== undefined) p.set('capture', String(s.capture));
  }
  if (s.view === 'search') p.set('q', s.q);
  if (s.view === 'domain' || s.view === 'search') {
    if (s.domain) p.set('domain', s.domain);
    if (s.dataset !== null && s.dataset !== undefined) p.set('dataset', String(s.dataset));
    if (s.view === 'domain') for (const k of FILTER_KEYS) if (s[k]) p.set(k, s[k]);
    if (s.at && s.at.length > 0) {
      p.set('at', s.at.join('.'));
      if (s.v) p.set('v', s.v);
    }
  }
  return '#' + p.toString();
}

/** A domain view state with no filter, or extra over it. */
const domainState = (domain, extra) => Object.assign({ view: 'domain', domain, dataset: null, at: [], v: null }, extra || {});
const pageState = (url, capture) => ({ view: 'page', url, capture: capture === undefined ? null : capture });

function go(s) {
  const h = hashOf(s);
  if (h === location.hash || (h === '' && (location.hash === '#' || location.hash === ''))) render(false);
  else location.hash = h;
}

/** What the user typed → a state: a URL with its scheme opens its page view, anything else its host's domain. */
function stateOfSearch(input) {
  const v = input.trim();
  if (/^https?:\/\/[^/?#]/i.test(v)) return pageState(v);
  const host = v.split(/[/?#]/)[0] || v;
  return host ? domainState(host) : null;
}

// ---- formatting ----
function formatTs(ts) {
  const d = new Date(ts);
  if (typeof ts !== 'string' || Number.isNaN(d.getTime())) return String(ts);
  return DF.format(d) + ' UTC';
}
function formatDay(ts) {
  const d = new Date(ts);
  return typeof ts !== 'string' || Number.isNaN(d.getTime()) ? String(ts) : DAY.format(d);
}
function formatBytes(n) {
  if (typeof n !== 'number') return '—';
  if (n < 1024) return NF.format(n) + ' B';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KiB';
  return (n / 1024 / 1024).toFixed(1) + ' MiB';
}
function safeHttpUrl(u) {
  try {
    const x = new URL(u);
    return x.protocol === 'http:' || x.protocol === 'https:' ? x.href : null;
  } catch (e) { return null; }
}
/** The URL as an outside link (new tab, no referrer), or plain text when it is not http(s). */
function outLink(u, cls) {
  const href = safeHttpUrl(u);
  return href
    ? el('a', { href, rel: 'noopener noreferrer', target: '_blank', class: cls }, String(u))
    : el('span', { class: cls + ' mono' }, String(u));
}
const plural = (n, one, many) => NF.format(n) + ' ' + (n === 1 ? one : many);
const nameOf = (ds) => (ds && ds.name ? String(ds.name) : 'dataset ' + (ds ? ds.dataset_id : '?'));
const statusText = (st) => (st === null || st === undefined ? '—' : String(st));

// ---- rendering ----
let seq = 0;
let inflight = null;
let pendingNotice = null;

function setState(state) {
  main.dataset.state = state;
  main.setAttribute('aria-busy', state === 'loading' ? 'true' : 'false');
  if (state !== 'loading') main.dataset.rendered = location.hash;
}

function clearError() {
  errorBox.hidden = true;
  errorBox.replaceChildren();
  delete errorBox.dataset.code;
  delete errorBox.dataset.param;
}

function showError(err, s) {
  const code = err && err.code ? err.code : 'UNKNOWN';
  const explain = MESSAGES[code];
  const text = explain ? explain(s, err) : 'Something went wrong.';
  errorBox.replaceChildren(
    el('p', { class: 'error-text' }, text),
    el('p', { class: 'error-code' }, el('code', null, code), err && err.status ? ' (HTTP ' + err.status + ')' : '', err && err.message ? ': ' + err.message : ''),
  );
  errorBox.dataset.code = code;
  if (err && err.param) errorBox.dataset.param = err.param;
  errorBox.hidden = false;
  if (code === 'CCP_ERR_API_UNAUTHORIZED') {
    $('auth').open = true;
    $('token').focus();
  }
}

function showNotice(text) {
  noticeBox.hidden = text === null;
  noticeBox.textContent = text === null ? '' : text;
}

/** Shows the sections of one view and hides the rest. */
function showView(view) {
  const keep = VIEW_SECTIONS[view] || [];
  for (const k of Object.keys(sections)) if (!keep.includes(k)) sections[k].hidden = true;
}

/**
 * The render's context: its abort signal, check() that stops a render a newer one replaced, and whether it is the
 * one retry a view may ask for (AGAIN), so a version gone twice in a row is an error, not a loop.
 */
function contextOf(mine, ctl, retried) {
  return {
    signal: ctl.signal,
    retried: retried === true,
    check() { if (mine !== seq) throw new DOMException('replaced by a newer render', 'AbortError'); },
  };
}

const AGAIN = 'again';

async function render(force, retried) {
  const s = readState();
  const mine = ++seq;
  if (inflight) inflight.abort();
  const ctl = new AbortController();
  inflight = ctl;
  clearError();
  showNotice(pendingNotice);
  pendingNotice = null;
  setState('loading');
  q.value = s.view === 'page' ? s.url : s.domain; // Back/Forward and links change the search too
  syncTextSearch(s);
  showView(s.view);
  const c = contextOf(mine, ctl, retried);
  try {
    let out;
    if (s.view === 'page') out = await renderPageView(s, c, force);
    else if (s.view === 'domain') out = await renderDomainView(s, c, force);
    else if (s.view === 'search') out = await renderSearchView(s, c);
    else out = await renderHome(s, c);
    if (mine !== seq) return;
    if (out === AGAIN) { render(true, true); return; }
    labelScope(readState()); // the domain view may have replaced a host spelling with its domain
    setState('ready');
  } catch (err) {
    if (mine !== seq || (err && err.name === 'AbortError')) return;
    if (!(err instanceof ApiFailure)) err = new ApiFailure(0, 'UNKNOWN', String(err && err.message ? err.message : err));
    failView(s, err);
    showError(err, s);
    setState('error');
  }
}

/** What stays on screen after an error: a refused filter or crawl keeps the domain and the filters to fix it. */
function failView(s, err) {
  const keepDomain = s.view === 'domain' && (err.code === 'CCP_ERR_API_DATASET_NOT_FOUND' || err.code === 'CCP_ERR_API_BAD_REQUEST');
  if (keepDomain) {
    $('pages-body').hidden = true;
    return;
  }
  forgetDomain();
  showView('none');
}
`;

const BOOT = String.raw`
// ---- events ----
$('search').addEventListener('submit', (e) => {
  e.preventDefault();
  const s = stateOfSearch(q.value);
  if (!s) { q.focus(); return; }
  forgetDomain(); // a new search always asks the API again
  forgetUrl();
  go(s);
});

function tokenChanged() {
  forgetDomain();
  forgetUrl();
  render(true);
  refreshStatus();
}
$('token-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const t = $('token').value.trim();
  $('token').value = '';
  setToken(t);
  $('auth').open = false;
  tokenChanged();
});
$('token-clear').addEventListener('click', () => {
  $('token').value = '';
  setToken(null);
  tokenChanged();
});

document.addEventListener('keydown', (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement || (t instanceof HTMLElement && t.isContentEditable);
  if (typing) return;
  if (e.key === '/') {
    // the search view's box is the full-text one
    const box = readState().view === 'search' ? fq : q;
    e.preventDefault(); box.focus(); box.select(); return;
  }
  if (e.key !== 'n' && e.key !== 'p') return;
  const view = readState().view;
  if (view === 'domain') turnPage(e.key === 'n' ? 'next' : 'prev');
  else if (view === 'search') turnSearchPage(e.key === 'n' ? 'next' : 'prev');
  else if (view === 'page') stepCapture(e.key === 'n' ? 1 : -1);
});

window.addEventListener('hashchange', () => render(false));

render(false);
refreshStatus();
if (!location.hash) q.focus();
`;

/**
 * The explorer's client script (vanilla JS, served as /explorer/app.<hash>.js). It talks only to this origin's JSON
 * API and writes API data into the DOM as text (createElement/textContent, never an HTML sink; the CSP's Trusted
 * Types would refuse one). State lives in the URL hash, so Back, reload and bookmarks work. Kept as strings so tsc
 * ships it in dist without a copy step; serve-explorer.test.ts checks that it parses.
 */
export const EXPLORER_SCRIPT =
  "(() => {\n'use strict';\n" +
  CORE + EXPLORER_STATUS_SCRIPT + EXPLORER_HOME_SCRIPT + EXPLORER_DOMAIN_SCRIPT + EXPLORER_CHART_SCRIPT + EXPLORER_PAGE_VIEW_SCRIPT + EXPLORER_SEARCH_SCRIPT + BOOT +
  '})();\n';
