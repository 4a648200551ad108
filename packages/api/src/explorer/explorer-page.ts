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
  <aside id="status" class="status" aria-label="Pipeline status" aria-live="polite"><span class="muted">status…</span></aside>
</header>
<main id="main" data-state="loading">
  <form id="search" class="search" role="search" autocomplete="off">
    <label for="q">Domain or host</label>
    <input id="q" name="q" type="search" required maxlength="300" placeholder="example.com" spellcheck="false" autocapitalize="off" autocomplete="off" aria-describedby="q-hint">
    <button type="submit">Search</button>
    <p id="q-hint" class="hint">Any host or URL works (<code>WWW.Example.CO.UK</code> → <code>example.co.uk</code>). Press <kbd>/</kbd> to come back here.</p>
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
  <div id="error" class="error" role="alert" hidden></div>
  <section id="overview" aria-labelledby="overview-title" hidden>
    <h2 id="overview-title">Datasets</h2>
    <p id="overview-meta" class="muted"></p>
    <table class="grid">
      <thead><tr><th scope="col">Dataset</th><th scope="col">Crawl</th><th scope="col" class="num">URLs</th><th scope="col" class="num">Domains</th></tr></thead>
      <tbody id="overview-rows"></tbody>
    </table>
  </section>
  <section id="domain" aria-labelledby="domain-title" hidden>
    <h2 id="domain-title"></h2>
    <p id="domain-meta" class="muted"></p>
    <ul id="datasets" class="datasets"></ul>
  </section>
  <section id="urls" aria-labelledby="urls-title" hidden>
    <h2 id="urls-title"></h2>
    <nav class="pager" aria-label="URL pages">
      <button type="button" id="prev" aria-keyshortcuts="p">← Previous</button>
      <span id="range" aria-live="polite"></span>
      <button type="button" id="next" aria-keyshortcuts="n">Next →</button>
    </nav>
    <table class="grid">
      <thead><tr><th scope="col">Title and URL</th><th scope="col">Captured (UTC)</th><th scope="col" class="num">Status</th></tr></thead>
      <tbody id="rows"></tbody>
    </table>
    <nav class="pager" aria-label="URL pages (bottom)">
      <button type="button" id="prev-bottom">← Previous</button>
      <span id="range-bottom"></span>
      <button type="button" id="next-bottom">Next →</button>
    </nav>
  </section>
</main>
<footer class="foot muted">Keys: <kbd>/</kbd> search · <kbd>n</kbd> next page · <kbd>p</kbd> previous page · Back and reload keep your place.</footer>
</body>
</html>
`;
}
