/** The explorer's stylesheet: system fonts only (nothing fetched), light and dark, visible focus. */
export const EXPLORER_STYLES = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #5a6472; --line: #d5dae1; --accent: #1f4e79;
  --accent-bg: #e8f0f8; --err: #a4161a; --err-bg: #fdecec; --ok: #1a7f37; --warn: #9a6700; --focus: #d97706; --err5: #6e0f12;
  --mark-fg: #1b1f24; --mark-bg: #ffe58a; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9ee; --bg: #14171c; --muted: #9aa5b4; --line: #2f3742; --accent: #8cc4ff; --accent-bg: #1d2a3a;
    --err: #ff8a8a; --err-bg: #3a1d1f; --ok: #5fd37a; --warn: #e3b341; --err5: #d0434c; --mark-fg: #fff6d6; --mark-bg: #6b5200; }
}
* { box-sizing: border-box; }
/* hidden wins over any display a rule gives (flex pagers, inline-flex labels) */
[hidden] { display: none !important; }
html { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
body { margin: 0; color: var(--fg); background: var(--bg); }
code, kbd, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace; font-size: 0.92em; }
kbd { border: 1px solid var(--line); border-radius: 3px; padding: 0 0.3em; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; }
.skip:focus { left: 0.5rem; top: 0.5rem; background: var(--bg); padding: 0.3rem 0.6rem; z-index: 2; }
.muted { color: var(--muted); }
.hint { color: var(--muted); font-size: 0.87em; margin: 0.3rem 0 0; flex-basis: 100%; }

.top { display: flex; flex-wrap: wrap; align-items: flex-start; justify-content: space-between; gap: 0.4rem 1rem;
  padding: 0.8rem 1.2rem; border-bottom: 1px solid var(--line); }
.top h1 { font-size: 1.15rem; margin: 0.2rem 0; }
.top h1 a { color: inherit; text-decoration: none; }
.status { font-size: 0.85em; text-align: right; }
.status strong { font-variant-numeric: tabular-nums; }
.status .summary { color: var(--muted); }
.status progress { width: 10rem; max-width: 100%; }
.status .warn { color: var(--warn); }

main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.2rem 2rem; }
main[data-state="loading"] { cursor: progress; }
.search { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem; }
.search label { font-weight: 600; }
input, button, select { font: inherit; color: inherit; max-width: 100%; }
input, select { padding: 0.35rem 0.5rem; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); }
#q, #fq { flex: 1 1 14rem; min-width: 0; }
.fts { margin-top: 0.7rem; }
.search label.scope { font-weight: normal; display: inline-flex; align-items: center; gap: 0.3rem; min-width: 0; overflow-wrap: anywhere; }
button { padding: 0.35rem 0.8rem; border: 1px solid var(--accent); border-radius: 4px; background: var(--accent-bg); cursor: pointer; }
button:disabled { opacity: 0.45; cursor: default; }
.auth { margin: 0.8rem 0; font-size: 0.92em; }
.auth form { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin-top: 0.4rem; }

.error, .notice { margin: 1rem 0; padding: 0.6rem 0.8rem; border-left: 4px solid var(--err); background: var(--err-bg); }
.notice { border-left-color: var(--accent); background: var(--accent-bg); }
.error p { margin: 0; }
.error .error-code { color: var(--muted); font-size: 0.87em; margin-top: 0.2rem; overflow-wrap: anywhere; }

h2 { font-size: 1.1rem; margin: 1.4rem 0 0.3rem; overflow-wrap: anywhere; }
h3 { font-size: 0.95rem; margin: 0.8rem 0 0.3rem; }
.ascii { font-weight: normal; color: var(--muted); font-size: 0.8em; }

/* tables scroll inside their own box: the page itself never scrolls sideways */
.scroll { overflow-x: auto; max-width: 100%; }
.grid { width: 100%; border-collapse: collapse; }
.grid th, .grid td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
.grid th { font-size: 0.85em; color: var(--muted); font-weight: 600; }
.grid .num { text-align: right; font-variant-numeric: tabular-nums; }
.grid td.ts { white-space: nowrap; font-variant-numeric: tabular-nums; }
.grid td.crawl, .grid td.size, .grid td.inlinks, .grid td.outlinks { white-space: nowrap; }
.grid tr.open-row { background: var(--accent-bg); }
.grid a[aria-current="true"] { font-weight: 700; }
#datasets tr { cursor: pointer; }
#datasets td, #datasets-head th { white-space: nowrap; }
.title { font-weight: 600; overflow-wrap: anywhere; }
.title.none, h2.none { font-weight: normal; font-style: italic; color: var(--muted); }
.link { overflow-wrap: anywhere; font-size: 0.92em; }
.code-2 { color: var(--ok); } .code-3 { color: var(--warn); } .code-4, .code-5 { color: var(--err); }

.chart { margin: 0.8rem 0; }
.chart figcaption { font-size: 0.85em; color: var(--muted); font-weight: 600; }
#chart-plot { width: 100%; max-width: 44rem; }
.bars { display: block; }
.bars .axis { stroke: var(--line); }
.bars .bar { fill: var(--accent); }
.bars .bar-group { cursor: pointer; }
.bars .bar-group.selected .bar, .bars .bar-group.selected rect { stroke: var(--focus); stroke-width: 2; }
.bars text { fill: var(--fg); font-size: 12px; }
.bars .label { fill: var(--muted); }
.s2xx { fill: var(--ok); background: var(--ok); } .s3xx { fill: var(--warn); background: var(--warn); }
.s4xx { fill: var(--err); background: var(--err); } .s5xx { fill: var(--err5); background: var(--err5); }
.legend { display: flex; flex-wrap: wrap; gap: 0.3rem 0.9rem; font-size: 0.85em; margin: 0.2rem 0 0; }
.legend .swatch { display: inline-block; width: 0.8em; height: 0.8em; border-radius: 2px; margin-right: 0.3em; vertical-align: -0.05em; }

.filters { display: grid; grid-template-columns: repeat(auto-fill, minmax(10.5rem, 1fr)); gap: 0.5rem 0.8rem; align-items: end;
  margin: 0.5rem 0 0.8rem; padding: 0.6rem; border: 1px solid var(--line); border-radius: 6px; font-size: 0.92em; }
.filters label { display: flex; flex-direction: column; gap: 0.15rem; color: var(--muted); min-width: 0; }
.filters input, .filters select { color: var(--fg); width: 100%; }
.filters label.check { flex-direction: row; align-items: center; gap: 0.4rem; color: var(--fg); }
.filters label.check input { width: auto; }
.filter-actions { display: flex; gap: 0.5rem; flex-wrap: wrap; grid-column: 1 / -1; }

.pager { display: flex; flex-wrap: wrap; align-items: center; gap: 0.8rem; margin: 0.6rem 0; }
#range { font-variant-numeric: tabular-nums; }

/* search results: a list of hits, the matched words marked (text colour set too, so dark mode stays readable) */
.facets { display: flex; flex-wrap: wrap; gap: 0.2rem 1.2rem; font-size: 0.92em; margin: 0.3rem 0; }
.facets a[aria-current="true"] { font-weight: 700; color: var(--fg); text-decoration: none; }
.hits { list-style: none; margin: 0; padding: 0; }
.hit { padding: 0.6rem 0; border-bottom: 1px solid var(--line); }
.hit h3 { font-size: 1rem; margin: 0 0 0.1rem; }
.hit .title.bare { font-weight: normal; }
.hit .snippet { margin: 0.3rem 0 0.2rem; overflow-wrap: anywhere; }
.hit .hit-meta { margin: 0; font-size: 0.87em; }
.hit time { font-variant-numeric: tabular-nums; }
mark { color: var(--mark-fg); background: var(--mark-bg); border-radius: 2px; padding: 0 0.1em; }
.empty { margin: 0.8rem 0; }
#search-range { font-variant-numeric: tabular-nums; }

.page-grid { display: grid; grid-template-columns: minmax(14rem, 18rem) minmax(0, 1fr); gap: 1.2rem; }
.timeline { list-style: none; margin: 0; padding: 0 0 0 0.9rem; border-left: 2px solid var(--line); }
.timeline li { position: relative; margin: 0 0 0.6rem; }
.timeline li::before { content: ""; position: absolute; left: -1.32rem; top: 0.45rem; width: 0.6rem; height: 0.6rem; border-radius: 50%;
  background: var(--bg); border: 2px solid var(--muted); }
.timeline li.chosen::before { background: var(--accent); border-color: var(--accent); }
.timeline a { display: flex; flex-wrap: wrap; gap: 0 0.5rem; padding: 0.2rem 0.4rem; border-radius: 4px; text-decoration: none; color: var(--fg); }
.timeline a time { flex-basis: 100%; font-weight: 600; font-variant-numeric: tabular-nums; }
.timeline a[aria-current="true"] { background: var(--accent-bg); }
.timeline a:hover { background: var(--accent-bg); }
.timeline .crawl, .timeline .lang { color: var(--muted); font-size: 0.9em; }
.timeline .status { font-size: 0.9em; }
.facts { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.2rem 0.8rem; margin: 0; font-size: 0.92em; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 32rem; overflow-y: auto; margin: 0; padding: 0.6rem 0.8rem;
  border: 1px solid var(--line); border-radius: 6px; font: 0.92em/1.5 system-ui, sans-serif; }
/* the link graph: the domain's linking pages (a line that opens), the page view's two lists */
.inlinks { margin: 0.2rem 0 0.6rem; }
.inlinks p { margin: 0; }
.inlinks summary { cursor: pointer; }
.inlinks .count { font-variant-numeric: tabular-nums; }
.link-list { margin: 0.4rem 0; padding-left: 1.8rem; font-size: 0.92em; }
.link-list li { margin: 0 0 0.25rem; overflow-wrap: anywhere; }
.link-list .link-meta { color: var(--muted); }
.link-list .crawl { white-space: nowrap; }
.link-list time { font-variant-numeric: tabular-nums; }
.page-links { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 0 1.2rem; margin-top: 1rem; border-top: 1px solid var(--line); }
.timeline .links { color: var(--muted); font-size: 0.9em; font-variant-numeric: tabular-nums; }
.foot { max-width: 72rem; margin: 0 auto; padding: 0 1.2rem 1.5rem; font-size: 0.85em; }

/* narrow screens (a 400 px phone): the header stacks, the page view is one column, page rows become cards */
@media (max-width: 40rem) {
  .top { padding: 0.6rem 0.8rem; }
  .status { text-align: left; }
  main { padding: 0.8rem 0.8rem 1.5rem; }
  .foot { padding: 0 0.8rem 1rem; }
  .page-grid, .page-links { grid-template-columns: minmax(0, 1fr); }
  .filters { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .cards .grid thead { display: none; }
  .cards .grid, .cards .grid tbody, .cards .grid tr { display: block; }
  .cards .grid tr { padding: 0.4rem 0; border-bottom: 1px solid var(--line); }
  .cards .grid td { display: inline-block; border: 0; padding: 0.1rem 0.6rem 0.1rem 0; text-align: left; }
  .cards .grid td.page-cell { display: block; }
  .cards .grid td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: 0.85em; }
}
`;
