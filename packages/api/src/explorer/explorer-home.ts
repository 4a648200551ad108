/**
 * The start view of the client script: the crawls of `/v1/datasets`, each opening its largest domains
 * (`/v1/datasets/{id}/domains`), each of those opening its domain view. A version that keeps no such list (404) says
 * so in place instead of failing the view.
 */
export const EXPLORER_HOME_SCRIPT = String.raw`
// ---- start view: crawls and their largest domains ----
const TOP_LIMIT = 50;
let datasetsSeen = null; // the last /v1/datasets answer: the status corner counts crawls from it

async function renderHome(s, c) {
  const body = await api('/v1/datasets', c.signal);
  c.check();
  datasetsSeen = body;
  const list = Array.isArray(body.datasets) ? body.datasets : [];
  $('overview-meta').textContent = 'Index version ' + (body.version || '?') + ' · ' + plural(list.length, 'crawl', 'crawls')
    + '. Open a crawl to browse its largest domains, or search a domain above.';
  $('overview-rows').replaceChildren(...list.map((d) => {
    const open = s.view === 'crawl' && s.dataset === d.dataset_id;
    return el('tr', { 'data-dataset-id': d.dataset_id, class: open ? 'open-row' : null },
      el('td', null, el('a', { href: hashOf({ view: 'crawl', dataset: d.dataset_id }), 'aria-current': open ? 'true' : null, 'data-dataset-id': d.dataset_id }, nameOf(d))),
      el('td', null, d.crawl === null || d.crawl === undefined ? '' : String(d.crawl)),
      el('td', { class: 'num' }, NF.format(d.url_count)),
      el('td', { class: 'num' }, NF.format(d.domain_count)),
    );
  }));
  sections.overview.hidden = false;
  if (s.view !== 'crawl') return;
  const ds = list.find((d) => d.dataset_id === s.dataset);
  $('top-title').textContent = 'Largest domains in ' + (ds ? nameOf(ds) : 'dataset ' + s.dataset);
  $('top-rows').replaceChildren();
  sections.top.hidden = false;
  let top;
  try {
    top = await api('/v1/datasets/' + s.dataset + '/domains?limit=' + TOP_LIMIT, c.signal, body.version);
  } catch (err) {
    if (!(err instanceof ApiFailure) || (err.code !== 'CCP_ERR_API_DATASET_NOT_FOUND' && !gone(err))) throw err;
    c.check();
    // the lake keeps no such list yet (or the crawl is hidden): say so here, the crawl list stays usable
    $('top-meta').textContent = 'This index version keeps no list of the largest domains of this crawl. Search a domain above instead.';
    $('top').dataset.missing = 'true';
    return;
  }
  c.check();
  delete $('top').dataset.missing;
  const items = Array.isArray(top.items) ? top.items : [];
  $('top-meta').textContent = items.length === 0 ? 'No domains.' : 'The ' + plural(items.length, 'domain', 'domains') + ' with the most URLs in this crawl, most first. Open one to see its pages.';
  $('top-rows').replaceChildren(...items.map((it, k) => el('tr', { 'data-domain': it.domain },
    el('td', { class: 'num' }, NF.format(k + 1)),
    el('td', null, el('a', { href: hashOf(domainState(it.domain, { dataset: s.dataset })) }, String(it.domain))),
    el('td', { class: 'num' }, NF.format(it.url_count)),
  )));
}
`;
