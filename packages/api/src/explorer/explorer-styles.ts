/** The explorer's stylesheet: system fonts only (nothing fetched), light and dark, visible focus. */
export const EXPLORER_STYLES = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #5a6472; --line: #d5dae1; --accent: #1f4e79;
  --accent-bg: #e8f0f8; --err: #a4161a; --err-bg: #fdecec; --ok: #1a7f37; --warn: #9a6700; --focus: #d97706; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e9ee; --bg: #14171c; --muted: #9aa5b4; --line: #2f3742; --accent: #8cc4ff; --accent-bg: #1d2a3a;
    --err: #ff8a8a; --err-bg: #3a1d1f; --ok: #5fd37a; --warn: #e3b341; }
}
* { box-sizing: border-box; }
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

.top { display: flex; align-items: flex-start; justify-content: space-between; gap: 1rem; padding: 0.8rem 1.2rem;
  border-bottom: 1px solid var(--line); }
.top h1 { font-size: 1.15rem; margin: 0.2rem 0; }
.top h1 a { color: inherit; text-decoration: none; }
.status { font-size: 0.85em; text-align: right; min-width: 12rem; }
.status progress { width: 10rem; vertical-align: middle; }
.status dl { display: grid; grid-template-columns: auto auto; gap: 0 0.6rem; margin: 0.2rem 0 0; justify-content: end; }
.status dt { color: var(--muted); }
.status dd { margin: 0; font-variant-numeric: tabular-nums; }

main { max-width: 72rem; margin: 0 auto; padding: 1rem 1.2rem 2rem; }
main[data-state="loading"] { cursor: progress; }
.search { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem; }
.search label { font-weight: 600; }
input, button { font: inherit; color: inherit; }
input { padding: 0.35rem 0.5rem; border: 1px solid var(--line); border-radius: 4px; background: var(--bg); }
#q { flex: 1 1 18rem; }
button { padding: 0.35rem 0.8rem; border: 1px solid var(--accent); border-radius: 4px; background: var(--accent-bg); cursor: pointer; }
button:disabled { opacity: 0.45; cursor: default; }
.auth { margin: 0.8rem 0; font-size: 0.92em; }
.auth form { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; margin-top: 0.4rem; }

.error { margin: 1rem 0; padding: 0.6rem 0.8rem; border-left: 4px solid var(--err); background: var(--err-bg); }
.error p { margin: 0; }
.error .error-code { color: var(--muted); font-size: 0.87em; margin-top: 0.2rem; }

h2 { font-size: 1.1rem; margin: 1.4rem 0 0.3rem; overflow-wrap: anywhere; }
.datasets { list-style: none; padding: 0; margin: 0.5rem 0; display: flex; flex-wrap: wrap; gap: 0.5rem; }
.datasets a { display: inline-block; padding: 0.4rem 0.7rem; border: 1px solid var(--line); border-radius: 6px; text-decoration: none; }
.datasets a[aria-current="true"] { border-color: var(--accent); background: var(--accent-bg); font-weight: 600; }
.datasets .count { color: var(--muted); margin-left: 0.4rem; font-variant-numeric: tabular-nums; }

.pager { display: flex; align-items: center; gap: 0.8rem; margin: 0.6rem 0; }
#range { font-variant-numeric: tabular-nums; }
.grid { width: 100%; border-collapse: collapse; }
.grid th, .grid td { text-align: left; padding: 0.35rem 0.5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
.grid th { font-size: 0.85em; color: var(--muted); font-weight: 600; }
.grid .num { text-align: right; font-variant-numeric: tabular-nums; }
.grid td.ts { white-space: nowrap; font-variant-numeric: tabular-nums; }
.title { font-weight: 600; overflow-wrap: anywhere; }
.title.none { font-weight: normal; font-style: italic; color: var(--muted); }
.link { overflow-wrap: anywhere; font-size: 0.92em; }
.code-2 { color: var(--ok); } .code-3 { color: var(--warn); } .code-4, .code-5 { color: var(--err); }
.foot { max-width: 72rem; margin: 0 auto; padding: 0 1.2rem 1.5rem; font-size: 0.85em; }
`;
