/** Where the page loads its assets from (hashed names, see serve-explorer.ts). */
export interface ExplorerAssetPaths {
  script: string;
  style: string;
  icon: string;
}

/** The favicon: a small inline-free SVG (served from this origin like everything else). */
export const EXPLORER_ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f4e79"/>' +
  '<circle cx="14" cy="14" r="7" fill="none" stroke="#fff" stroke-width="3"/><path d="M19 19l7 7" stroke="#fff" stroke-width="3" stroke-linecap="round"/></svg>\n';

/**
 * The explorer's one HTML page: static markup only (no inline script or style, so the CSP can forbid both); the
 * script fills it from the JSON API. Asset paths are ours, never request data.
 */
export function explorerPage(assets: ExplorerAssetPaths): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>ccpipe explorer</title>
<link rel="icon" type="image/svg+xml" href="${assets.icon}">
<link rel="stylesheet" href="${assets.style}">
<script src="${assets.script}" defer></script>
</head>
<body>
<a class="skip" href="#q">Skip to search</a>
<header class="top">
  <h1><a href="#" id="home">ccpipe explorer</a></h1>
  <aside id="status" class="status" aria-label="Index and ingest status" aria-live="polite"><span class="muted">status…</span></aside>
</header>
<main id="main" data-state="loading">
  <form id="search" class="search" role="search" autocomplete="off">
    <label for="q">Domain, host or URL</label>
    <input id="q" name="q" type="search" required maxlength="8192" placeholder="example.com" spellcheck="false" autocapitalize="off" autocomplete="off" aria-describedby="q-hint">
    <button type="submit">Search</button>
    <p id="q-hint" class="hint">A host opens its domain (<code>WWW.Example.CO.UK</code> → <code>example.co.uk</code>); a URL with its scheme opens that page's captures. Press <kbd>/</kbd> to come back here.</p>
  </form>
  <form id="fts" class="search fts" role="search" autocomplete="off" aria-label="Full-text search">
    <label for="fq">Full text</label>
    <input id="fq" name="fq" type="search" required maxlength="1000" placeholder="words, &quot;a phrase&quot;, -not" aria-describedby="fq-hint">
    <label id="fq-scope" class="scope" hidden><input type="checkbox" id="fq-domain"> only in <span id="fq-domain-name" class="mono"></span></label>
    <button type="submit" id="fq-go">Search text</button>
    <p id="fq-hint" class="hint">Pages whose title or text hold every word, best first; <code>"a phrase"</code> as written, <code>-word</code> left out.</p>
  </form>
  <details id="auth" class="auth">
    <summary>Access token <span id="token-state" class="muted">(none)</span></summary>
    <form id="token-form" autocomplete="off">
      <label for="token">Bearer token</label>
      <input id="token" name="token" type="password" autocomplete="off" spellcheck="false">
      <button type="submit">Use token</button>
      <button type="button" id="token-clear">Forget token</button>
    </form>
    <p class="hint">Only needed when the API has an ACL. Kept in this tab only (sessionStorage) and sent as <code>Authorization: Bearer …</code> to this API.</p>
  </details>
  <div id="notice" class="notice" role="status" hidden></div>
  <div id="error" class="error" role="alert" hidden></div>
  <section id="overview" aria-labelledby="overview-title" hidden>
    <h2 id="overview-title">Crawls in the index</h2>
    <p id="overview-meta" class="muted"></p>
    <div class="scroll">
      <table class="grid">
        <thead><tr><th scope="col">Dataset</th><th scope="col">Crawl</th><th scope="col" class="num">URLs</th><th scope="col" class="num">Domains</th></tr></thead>
        <tbody id="overview-rows"></tbody>
      </table>
    </div>
  </section>
  <section id="top" aria-labelledby="top-title" hidden>
    <h2 id="top-title"></h2>
    <p id="top-meta" class="muted"></p>
    <div class="scroll">
      <table class="grid">
        <thead><tr><th scope="col" class="num">#</th><th scope="col">Domain</th><th scope="col" class="num">URLs</th></tr></thead>
        <tbody id="top-rows"></tbody>
      </table>
    </div>
  </section>
  <section id="domain" aria-labelledby="domain-title" hidden>
    <h2 id="domain-title"><span id="domain-name"></span> <span id="domain-ascii" class="ascii mono" hidden></span></h2>
    <p id="domain-meta" class="muted"></p>
    <div id="inlinks" class="inlinks" hidden></div>
    <figure id="chart" class="chart">
      <figcaption id="chart-caption"></figcaption>
      <div id="chart-plot"></div>
      <p id="chart-legend" class="legend" hidden></p>
    </figure>
    <p id="facts-note" class="muted" hidden>This index version carries no per-crawl facts (status mix, languages, sizes); they appear once a merge computes them.</p>
    <div class="scroll">
      <table class="grid" id="datasets-table">
        <thead><tr id="datasets-head"></tr></thead>
        <tbody id="datasets"></tbody>
      </table>
    </div>
  </section>
  <section id="pages" aria-labelledby="pages-title" hidden>
    <h2 id="pages-title"></h2>
    <form id="filters" class="filters" autocomplete="off" aria-label="Filter and sort pages">
      <label>Crawl <select id="f-dataset" name="dataset"></select></label>
      <label>Captured from <input id="f-from" name="from" type="date"></label>
      <label>before <input id="f-to" name="to" type="date"></label>
      <label>Status <input id="f-status" name="status" type="text" maxlength="100" placeholder="4xx,301" spellcheck="false"></label>
      <label>Min size (bytes) <input id="f-min" name="min_size" type="number" min="0" step="1" inputmode="numeric"></label>
      <label>Max size (bytes) <input id="f-max" name="max_size" type="number" min="0" step="1" inputmode="numeric"></label>
      <label class="link-filter" hidden>Min inlinks <input id="f-min-inlinks" name="min_inlinks" type="number" min="0" step="1" inputmode="numeric"></label>
      <label class="link-filter check" hidden><input id="f-dead" name="max_outlinks" type="checkbox" value="0"> Dead ends (no outlinks)</label>
      <label>Sort by <select id="f-sort" name="sort"><option value="surt">URL (SURT)</option><option value="ts">capture time</option><option value="size">size</option><option value="inlinks" class="link-sort" hidden disabled>most linked to</option><option value="outlinks" class="link-sort" hidden disabled>most outlinks</option></select></label>
      <label>Order <select id="f-order" name="order"><option value="asc">ascending</option><option value="desc">descending</option></select></label>
      <div class="filter-actions"><button type="submit" id="f-apply">Apply</button> <button type="button" id="f-clear">Clear filters</button></div>
    </form>
    <div id="pages-body">
      <nav class="pager" aria-label="Pages of rows">
        <button type="button" id="prev" aria-keyshortcuts="p">← Previous</button>
        <span id="range" aria-live="polite"></span>
        <button type="button" id="next" aria-keyshortcuts="n">Next →</button>
      </nav>
      <div class="scroll cards">
        <table class="grid pages">
          <thead><tr><th scope="col">Title and URL</th><th scope="col">Crawl</th><th scope="col">Captured (UTC)</th><th scope="col" class="num">Status</th><th scope="col" class="num">Size</th><th scope="col">Language</th><th scope="col" class="num links-col" hidden>Inlinks</th><th scope="col" class="num links-col" hidden>Outlinks</th></tr></thead>
          <tbody id="rows"></tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages of rows (bottom)">
        <button type="button" id="prev-bottom">← Previous</button>
        <span id="range-bottom"></span>
        <button type="button" id="next-bottom">Next →</button>
      </nav>
    </div>
  </section>
  <section id="results" aria-labelledby="results-title" hidden>
    <h2 id="results-title"></h2>
    <p class="muted"><strong id="search-total"></strong><span id="search-meta"></span></p>
    <p id="search-scope" class="facets"></p>
    <div id="results-body">
      <nav class="pager" aria-label="Pages of results">
        <button type="button" id="search-prev" aria-keyshortcuts="p">← Previous</button>
        <span id="search-range" aria-live="polite"></span>
        <button type="button" id="search-next" aria-keyshortcuts="n">Next →</button>
      </nav>
      <p id="search-empty" class="empty" hidden></p>
      <ol id="hits" class="hits"></ol>
      <p id="search-capped" class="muted" hidden></p>
      <nav class="pager" aria-label="Pages of results (bottom)">
        <button type="button" id="search-prev-bottom">← Previous</button>
        <span id="search-range-bottom"></span>
        <button type="button" id="search-next-bottom">Next →</button>
      </nav>
    </div>
  </section>
  <section id="page" aria-labelledby="page-title" hidden>
    <h2 id="page-title"></h2>
    <p id="page-url" class="link"></p>
    <p id="page-meta" class="muted"></p>
    <div class="page-grid">
      <nav aria-labelledby="captures-title" class="timeline-box">
        <h3 id="captures-title">Captures, oldest first</h3>
        <ol id="captures" class="timeline"></ol>
      </nav>
      <div class="capture">
        <h3 id="capture-title"></h3>
        <dl id="capture-facts" class="facts"></dl>
        <h3>Extracted text <span id="text-note" class="muted"></span></h3>
        <pre id="capture-text" class="text" tabindex="0"></pre>
      </div>
    </div>
    <div id="page-links" class="page-links" hidden>
      <section id="links-in" aria-labelledby="links-in-title">
        <h3 id="links-in-title"></h3>
        <ol id="links-in-list" class="link-list"></ol>
        <p id="links-in-more" class="muted" hidden></p>
      </section>
      <section id="links-out" aria-labelledby="links-out-title">
        <h3 id="links-out-title"></h3>
        <ol id="links-out-list" class="link-list"></ol>
        <p id="links-out-more" class="muted" hidden></p>
      </section>
    </div>
  </section>
</main>
<footer class="foot muted">Keys: <kbd>/</kbd> search · <kbd>n</kbd> next page (rows or results) or newer capture · <kbd>p</kbd> previous page or older capture · Back and reload keep your place.</footer>
</body>
</html>
`;
}
