/** What {@link scanTagNesting} found, stopping early once a limit is passed. */
export interface TagNesting {
  /** Start tags that make an element (void and self-closed ones included; `<html>`, `<head>`, `<body>` and a nested `<form>` not). */
  elements: number;
  /** Deepest nesting estimated, `<html>`/`<body>` not counted. */
  depth: number;
  overElements: boolean;
  overDepth: boolean;
}

// Elements that never have children.
const VOID = new Set([
  'area', 'base', 'basefont', 'bgsound', 'br', 'col', 'embed', 'frame', 'hr', 'image', 'img', 'input', 'keygen',
  'link', 'meta', 'param', 'source', 'track', 'wbr',
]);

// Elements whose content is text up to their end tag (or to the end of the input when it is missing).
const RAW_TEXT = ['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext'] as const;
const RAW_END = new Map<string, RegExp>(RAW_TEXT.map((n) => [n, new RegExp(`</${n}[\\s/>]`, 'gi')]));

// Start tags that close an open <p> (HTML's "close a p element in button scope").
const CLOSES_P = new Set([
  'address', 'article', 'aside', 'blockquote', 'center', 'details', 'dialog', 'dir', 'div', 'dl', 'dd', 'dt',
  'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hgroup', 'hr',
  'li', 'listing', 'main', 'menu', 'nav', 'ol', 'p', 'plaintext', 'pre', 'section', 'summary', 'table', 'ul', 'xmp',
]);
const P_SCOPE = new Set(['applet', 'button', 'caption', 'html', 'marquee', 'object', 'table', 'td', 'template', 'th', 'svg', 'math']);
const P_ONLY: ReadonlySet<string> = new Set(['p']);
const HEADINGS: ReadonlySet<string> = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6']);
const EMPTY: ReadonlySet<string> = new Set();
const TABLE_CONTEXT = new Set(['table', 'tbody', 'thead', 'tfoot', 'tr']);
// Start tags that stay in a table instead of being moved before it.
const TABLE_CONTENT = new Set(['caption', 'col', 'colgroup', 'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'table', 'form', 'input', 'template']);

/** Start tags that close an open element of the same group, looking down the stack no further than a boundary. */
const IMPLIED_CLOSE: ReadonlyMap<string, { closes: ReadonlySet<string>; boundary: ReadonlySet<string> }> = (() => {
  const m = new Map<string, { closes: ReadonlySet<string>; boundary: ReadonlySet<string> }>();
  const rule = (names: string[], closes: string[], boundary: string[]) => {
    for (const n of names) m.set(n, { closes: new Set(closes), boundary: new Set(boundary) });
  };
  rule(['li'], ['li'], ['ul', 'ol', 'menu', 'dir', 'table', 'template']);
  rule(['dd', 'dt'], ['dd', 'dt'], ['dl', 'table', 'template']);
  rule(['option'], ['option'], ['select', 'datalist', 'optgroup', 'template']);
  rule(['optgroup'], ['optgroup', 'option'], ['select', 'template']);
  rule(['td', 'th'], ['td', 'th'], ['tr', 'table', 'template']);
  rule(['tr'], ['tr'], ['table', 'template']);
  rule(['tbody', 'thead', 'tfoot'], ['tbody', 'thead', 'tfoot'], ['table', 'template']);
  rule(['caption', 'colgroup'], ['caption', 'colgroup'], ['table', 'template']);
  rule(['a'], ['a'], ['table', 'td', 'th', 'caption', 'template', 'object', 'applet', 'marquee', 'button']);
  rule(['nobr'], ['nobr'], ['table', 'td', 'th', 'caption', 'template']);
  rule(['button'], ['button'], ['table', 'td', 'th', 'caption', 'template', 'object', 'applet', 'marquee']);
  rule(['select'], ['select'], ['template']);
  rule(['rb', 'rt', 'rtc', 'rp'], ['rb', 'rt', 'rtc', 'rp'], ['ruby', 'template']);
  return m;
})();

// Formatting elements, and the elements HTML's adoption agency takes for a "furthest block" (a subset of its
// "special" category: leaving one out closes more, so the estimate stays low).
const FORMATTING = new Set(['a', 'b', 'big', 'code', 'em', 'font', 'i', 'nobr', 's', 'small', 'strike', 'strong', 'tt', 'u']);
const FURTHEST_BLOCK = new Set([
  'address', 'applet', 'article', 'aside', 'blockquote', 'button', 'caption', 'center', 'dd', 'details', 'dialog', 'dir', 'div',
  'dl', 'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hgroup',
  'iframe', 'li', 'listing', 'main', 'marquee', 'menu', 'nav', 'object', 'ol', 'p', 'pre', 'section', 'select', 'summary',
  'table', 'tbody', 'td', 'template', 'textarea', 'tfoot', 'th', 'thead', 'tr', 'ul', 'xmp',
]);

/** Options of {@link scanTagNesting}. */
export interface TagNestingOptions {
  /**
   * Estimate for an HTML-standard parser (jsdom) rather than htmlparser2 (linkedom). They differ on a formatting
   * end tag with a block open inside the element (`<a><div></a>`): htmlparser2 closes everything up to the `<a>`;
   * HTML's adoption agency closes only the `<a>` and keeps the block open, so 1,000 of them nest 1,000 deep
   * (jsdom took 1–12 s over 12–35 KB of them before the check on its DOM refused them).
   */
  html5?: boolean;
}

// Tags that make no element of their own here: the parsers merge them into the one document element or body.
const DOCUMENT_TAGS = new Set(['html', 'head', 'body']);

/** An ASCII letter: what a tag name starts with. */
export const isAlpha = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/** HTML whitespace. */
export const isSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 12 || c === 13;
/** Where a tag or attribute name ends: whitespace, `/`, `>` (and `=` for an attribute). */
export const isNameEnd = (c: number): boolean => isSpace(c) || c === 47 || c === 62;

/**
 * Position of the `>` that ends a tag whose attributes start at `p`, reading quoted values as the HTML tokenizer
 * does (JSON in a `data-…='{"x": "<b>…</b>"}'` holds tags that are not tags); -1 when the input ends first. Pure.
 */
export function tagEnd(html: string, p: number): number {
  const n = html.length;
  for (;;) {
    while (p < n && (isSpace(html.charCodeAt(p)) || html.charCodeAt(p) === 47)) p++;
    if (p >= n) return -1;
    if (html.charCodeAt(p) === 62) return p;
    p++; // an attribute name may start with '='
    while (p < n && !isNameEnd(html.charCodeAt(p)) && html.charCodeAt(p) !== 61) p++;
    while (p < n && isSpace(html.charCodeAt(p))) p++;
    if (html.charCodeAt(p) !== 61) continue;
    p++;
    while (p < n && isSpace(html.charCodeAt(p))) p++;
    const q = html.charCodeAt(p);
    if (q === 34 || q === 39) {
      const close = html.indexOf(q === 34 ? '"' : "'", p + 1);
      if (close < 0) return -1;
      p = close + 1;
    } else {
      while (p < n && !isSpace(html.charCodeAt(p)) && html.charCodeAt(p) !== 62) p++;
    }
  }
}

/**
 * A cheap estimate of the element count and nesting depth a DOM built from `html` would have, read from the
 * raw tags without building anything. It runs before any DOM so that a small page built to be deep (1,000
 * nested `<table><td>` in 11 KB kept jsdom busy for 3–5 s before the depth check after parsing refused it) is
 * refused in microseconds.
 *
 * The estimate errs low so that it refuses only what the check on the built DOM would refuse too: it closes
 * elements the way HTML's parser does where that keeps nesting down (a new `<p>`, `<li>`, `<td>`, `<option>`…
 * closes the open one; an end tag closes everything above its match — with `html5`, a formatting end tag with a
 * block inside closes only itself, as HTML's adoption agency does; `<html>`, `<head>`, `<body>` and the
 * elements parsers add by themselves — `<tbody>`, `<tr>` — are not counted; an element misplaced in a table is
 * counted beside the table, where HTML's parser puts it), treats `/>` as closing any element, and skips raw
 * text (`<script>`, `<title>`, `<textarea>`…) and comments; an unterminated comment or raw-text element ends
 * the scan, as it ends the markup. Tags inside `<template>` count like any other (their DOM is built too).
 * Linear in the input: the stack is only searched for names that are open. Stops as soon as a limit is passed.
 * Pure.
 */
export function scanTagNesting(html: string, maxElements: number, maxDepth: number, opts: TagNestingOptions = {}): TagNesting {
  const html5 = opts.html5 === true;
  const names: string[] = [];
  const depths: number[] = [];
  const openCount = new Map<string, number>();
  let elements = 0;
  let deepest = 0;
  const n = html.length;

  const popTo = (index: number): void => {
    while (names.length > index) {
      const name = names.pop() as string;
      depths.pop();
      openCount.set(name, (openCount.get(name) ?? 1) - 1);
    }
  };
  /** Index of the topmost open element named in `wanted`, looking no further down than a `boundary`; -1 if none. */
  const findOpen = (wanted: ReadonlySet<string>, boundary: ReadonlySet<string>): number => {
    let any = false;
    for (const w of wanted) if ((openCount.get(w) ?? 0) > 0) any = true;
    if (!any) return -1;
    for (let i = names.length - 1; i >= 0; i--) {
      const name = names[i]!;
      if (wanted.has(name)) return i;
      if (boundary.has(name)) return -1;
    }
    return -1;
  };
  const result = (overElements: boolean, overDepth: boolean): TagNesting => ({ elements, depth: deepest, overElements, overDepth });

  let i = 0;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    const c = html.charCodeAt(lt + 1);
    if (c === 33 || c === 63) {
      // comment, doctype, CDATA, processing instruction
      const close = html.startsWith('<!--', lt) ? html.indexOf('-->', lt + 4) : html.indexOf('>', lt + 2);
      if (close < 0) break;
      i = close + 1;
      continue;
    }
    const isEnd = c === 47;
    const nameStart = isEnd ? lt + 2 : lt + 1;
    if (!isAlpha(html.charCodeAt(nameStart))) {
      i = lt + 1;
      continue;
    }
    let nameEnd = nameStart + 1;
    while (nameEnd < n && !isNameEnd(html.charCodeAt(nameEnd))) nameEnd++;
    const gt = tagEnd(html, nameEnd);
    if (gt < 0) break; // a tag cut off by the end of the input makes nothing
    i = gt + 1;
    const name = html.slice(nameStart, nameEnd).toLowerCase();

    if (isEnd) {
      if (DOCUMENT_TAGS.has(name)) continue;
      if (HEADINGS.has(name)) {
        const at = findOpen(HEADINGS, EMPTY);
        if (at >= 0) popTo(at);
      } else if ((openCount.get(name) ?? 0) > 0) {
        const at = names.lastIndexOf(name);
        if (html5 && FORMATTING.has(name) && names.slice(at + 1).some((x) => FURTHEST_BLOCK.has(x))) {
          // adoption agency: only the formatting element goes; what was open inside it moves up one level
          names.splice(at, 1);
          depths.splice(at, 1);
          openCount.set(name, (openCount.get(name) ?? 1) - 1);
          for (let j = at; j < depths.length; j++) depths[j]!--;
        } else popTo(at);
      }
      continue;
    }

    if (DOCUMENT_TAGS.has(name)) continue;
    if (name === 'form' && (openCount.get('form') ?? 0) > 0) continue; // a nested form is dropped
    elements++;
    if (elements > maxElements) return result(true, false);
    if (CLOSES_P.has(name)) {
      const at = findOpen(P_ONLY, P_SCOPE);
      if (at >= 0) popTo(at);
    }
    if (HEADINGS.has(name) && names.length > 0 && HEADINGS.has(names[names.length - 1]!)) popTo(names.length - 1);
    const implied = IMPLIED_CLOSE.get(name);
    if (implied) {
      const at = findOpen(implied.closes, implied.boundary);
      if (at >= 0) popTo(at);
    }
    const top = names.length - 1;
    let depth = top >= 0 ? depths[top]! + 1 : 1;
    if (top >= 0 && TABLE_CONTEXT.has(names[top]!)) {
      const table = names.lastIndexOf('table');
      if (name === 'table' && table >= 0) {
        // a table started directly in a table closes it (HTML's parser) rather than nesting
        popTo(table);
        depth = table > 0 ? depths[table - 1]! + 1 : 1;
      } else if (!TABLE_CONTENT.has(name)) {
        // misplaced in a table: HTML's parser moves it before the table, beside it
        depth = depths[table] ?? depth;
      }
    }
    if (depth > deepest) {
      deepest = depth;
      if (deepest > maxDepth) return result(false, true);
    }
    if (VOID.has(name) || html.charCodeAt(gt - 1) === 47) continue;
    const rawEnd = RAW_END.get(name);
    if (rawEnd) {
      if (name === 'plaintext') break;
      rawEnd.lastIndex = i;
      const m = rawEnd.exec(html);
      if (!m) break;
      i = m.index;
      continue;
    }
    names.push(name);
    depths.push(depth);
    openCount.set(name, (openCount.get(name) ?? 0) + 1);
  }
  return result(false, false);
}
