/**
 * The status corner of the client script: `/v1/status` in words ("Index version v000003 · 2 crawls · ingest 95 %
 * done"), never its field names. Refreshed every 10 s while ingest runs, every 60 s after.
 */
export const EXPLORER_STATUS_SCRIPT = String.raw`
// ---- status corner ----
const STATUS_BUSY_MS = 10000;
const STATUS_IDLE_MS = 60000;
let statusTimer = null;
let crawlCount = null; // {version, n}: crawls in a version, from /v1/datasets when the ingest does not list them

const num = (o, k) => (o && typeof o[k] === 'number' && Number.isFinite(o[k]) ? o[k] : null);

/** Ingest in words, and whether it is finished. */
function ingestWords(ing) {
  const planned = num(ing, 'blocksPlanned');
  const read = num(ing, 'blocksRead');
  if (ing.done === true) return { text: 'ingest done', done: true, planned, read };
  if (planned !== null && read !== null && planned > 0) {
    if (read >= planned) return { text: 'all input read, merging', done: false, planned, read };
    // floor: 99.6 % read is not "100 % done"
    return { text: 'ingest ' + Math.floor((read / planned) * 100) + ' % done', done: false, planned, read };
  }
  return { text: 'ingest running', done: false, planned, read };
}

function renderStatus(st, crawls) {
  const box = $('status');
  const version = st.version ? String(st.version) : null;
  const parts = [el('div', { class: 'version' }, version ? 'Index version ' : 'No index published yet', version ? el('strong', { id: 'status-version' }, version) : null)];
  const ing = st.ingest && typeof st.ingest === 'object' ? st.ingest : null;
  const words = [];
  if (crawls !== null) words.push(plural(crawls, 'crawl', 'crawls'));
  let done = true;
  let bar = null;
  if (ing) {
    const w = ingestWords(ing);
    done = w.done;
    words.push(w.text);
    if (!w.done && w.planned !== null && w.read !== null && w.planned > 0) {
      bar = el('progress', { max: w.planned, value: Math.min(w.read, w.planned), 'aria-label': 'crawl input read' });
    }
  }
  if (words.length > 0) parts.push(el('div', { id: 'status-summary', class: 'summary' }, words.join(' · ')));
  if (bar) parts.push(el('div', { class: 'progress' }, bar));
  const lf = st.load_failure && typeof st.load_failure === 'object' ? st.load_failure : null;
  if (lf) parts.push(el('div', { class: 'warn' }, 'Newer version ' + String(lf.version) + ' could not be loaded; this one is served meanwhile.'));
  box.replaceChildren(...parts);
  box.dataset.version = version || '';
  return done;
}

/** Crawls the version holds: the ingest's own list, else /v1/datasets (asked once per version). */
async function crawlsOf(st) {
  const ing = st.ingest && typeof st.ingest === 'object' ? st.ingest : null;
  if (ing && Array.isArray(ing.datasets) && ing.datasets.length > 0) return ing.datasets.length;
  if (!st.version) return null;
  if (datasetsSeen && datasetsSeen.version === st.version && Array.isArray(datasetsSeen.datasets)) return datasetsSeen.datasets.length;
  if (crawlCount && crawlCount.version === st.version) return crawlCount.n;
  try {
    const ds = await api('/v1/datasets', undefined, st.version);
    crawlCount = { version: st.version, n: Array.isArray(ds.datasets) ? ds.datasets.length : 0 };
    return crawlCount.n;
  } catch (e) {
    return null;
  }
}

async function refreshStatus() {
  clearTimeout(statusTimer);
  statusTimer = null;
  let wait = STATUS_BUSY_MS;
  try {
    const st = await api('/v1/status');
    if (renderStatus(st, await crawlsOf(st))) wait = STATUS_IDLE_MS;
  } catch (err) {
    const code = err && err.code ? err.code : 'UNKNOWN';
    const why = code === 'CCP_ERR_API_UNAUTHORIZED' ? 'needs an access token' : code === 'NETWORK' ? 'API unreachable' : 'unavailable';
    $('status').replaceChildren(el('span', { class: 'muted', 'data-code': code }, 'Status ' + why));
    if (code === 'CCP_ERR_API_UNAUTHORIZED') return; // the token form calls us again
    wait = STATUS_IDLE_MS;
  }
  if (!document.hidden) statusTimer = setTimeout(refreshStatus, wait);
}

document.addEventListener('visibilitychange', () => { if (!document.hidden && statusTimer === null) refreshStatus(); });
`;
