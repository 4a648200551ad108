import { CDATA_SECTION_NODE, ELEMENT_NODE, TEXT_NODE, type DomElement, type DomNode } from './dom-types';

// Elements that start a new line of text. `textContent` glues `<p>a</p><p>b</p>` into "ab", which
// merges words across paragraphs, list items and table cells.
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'caption', 'dd', 'details', 'dialog', 'div', 'dl',
  'dt', 'fieldset', 'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
  'header', 'hgroup', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'summary', 'table',
  'tbody', 'td', 'tfoot', 'th', 'thead', 'tr', 'ul', 'option', 'legend',
]);

// Elements whose text is never page text.
const SKIP = new Set(['script', 'style', 'noscript', 'template', 'head', 'iframe', 'object']);

/**
 * Normalises extracted text: one line per block, runs of whitespace (including no-break spaces)
 * collapsed to one space, lines trimmed, empty lines dropped. Pure.
 */
export function normalizeText(raw: string): string {
  const out: string[] = [];
  for (const line of raw.split('\n')) {
    const t = line.replace(/\s+/g, ' ').trim();
    if (t) out.push(t);
  }
  return out.join('\n');
}

/**
 * The text under `root` with a line break at every block element boundary, normalised as {@link normalizeText} does:
 * the lines of {@link blockLines}. Skips script/style/template content. Iterative: safe on any depth.
 */
export function blockText(root: DomNode): string {
  return blockLines(root).map((l) => l.text).join('\n');
}

/** {@link TextLine.within}: the line has text inside a `<figure>` or `<figcaption>`. */
export const WITHIN_FIGURE = 1;
/** {@link TextLine.within}: the line has text inside a `<nav>`. */
export const WITHIN_NAV = 2;
/** {@link TextLine.within}: the line has text inside a `<header>`. */
export const WITHIN_HEADER = 4;
/** {@link TextLine.within}: the line has text inside a table cell (`<td>`, `<th>`). */
export const WITHIN_CELL = 8;

// the index of an element's WITHIN_* bit (bit = 1 << index)
const WITHIN_INDEX: Record<string, number> = { figure: 0, figcaption: 0, nav: 1, header: 2, td: 3, th: 3 };

/** One line of {@link blockLines}: its text and what a boilerplate rule judges it by. */
export interface TextLine {
  /** The line as {@link blockText} gives it: whitespace collapsed, trimmed, never empty. */
  text: string;
  /** Characters of `text` that are the text of a link (`<a href>`); at most `text.length`. */
  linkChars: number;
  /** The `WITHIN_*` bits of the elements around any of the line's text. */
  within: number;
}

/**
 * The lines of the text under `root`: a line break at every block element boundary (`textContent` glues
 * `<p>a</p><p>b</p>` into "ab"), source line breaks inside text not breaks, script/style/template skipped, whitespace
 * collapsed, lines trimmed, empty ones dropped — each with how much of it is link text and which of figure, nav,
 * header or table cell it sits in. One walk, iterative: safe on any depth. Pure.
 */
export function blockLines(root: DomNode): TextLine[] {
  const lines: TextLine[] = [];
  let text = '';
  let linkChars = 0;
  let lineWithin = 0;
  // open elements of each WITHIN kind and open links, so the walk needs no stack
  const open = [0, 0, 0, 0];
  let links = 0;
  const within = () =>
    (open[0]! > 0 ? WITHIN_FIGURE : 0) |
    (open[1]! > 0 ? WITHIN_NAV : 0) |
    (open[2]! > 0 ? WITHIN_HEADER : 0) |
    (open[3]! > 0 ? WITHIN_CELL : 0);
  const flush = () => {
    if (text === '') return;
    const t = text.replace(/\s+/g, ' ').trim();
    if (t) lines.push({ text: t, linkChars: Math.min(linkChars, t.length), within: lineWithin });
    text = '';
    linkChars = 0;
    lineWithin = 0;
  };
  // entering (+1) or leaving (-1) an element the walk descended into
  const step = (el: DomElement, by: number) => {
    const name = el.localName;
    const i = WITHIN_INDEX[name];
    if (i !== undefined) open[i]! += by;
    else if (name === 'a' && el.getAttribute('href') !== null) links += by;
  };
  let node: DomNode | null = root.firstChild;
  outer: while (node) {
    if (node.nodeType === TEXT_NODE || node.nodeType === CDATA_SECTION_NODE) {
      const v = (node.nodeValue ?? '').replace(/\s+/g, ' ');
      if (v !== '') {
        text += v;
        if (links > 0) linkChars += v.length;
        if (v !== ' ') lineWithin |= within();
      }
    } else if (node.nodeType === ELEMENT_NODE) {
      const el = node as DomElement;
      const name = el.localName;
      if (!SKIP.has(name)) {
        if (BLOCK.has(name)) flush();
        const child: DomNode | null = node.firstChild;
        if (child) {
          step(el, 1);
          node = child;
          continue;
        }
      }
    }
    for (;;) {
      const next: DomNode | null = node.nextSibling;
      if (next) {
        node = next;
        continue outer;
      }
      const parent: DomNode | null = node.parentNode;
      if (!parent || parent === root) break outer;
      node = parent;
      step(node as DomElement, -1);
      if (BLOCK.has((node as DomElement).localName)) flush();
    }
  }
  flush();
  return lines;
}
