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
 * The text under `root` with a line break at every block element boundary, normalised by
 * {@link normalizeText}. Skips script/style/template content. Iterative: safe on any depth.
 */
export function blockText(root: DomNode): string {
  const parts: string[] = [];
  let node: DomNode | null = root.firstChild;
  outer: while (node) {
    // Open `node`; descend when it has children worth reading.
    if (node.nodeType === TEXT_NODE || node.nodeType === CDATA_SECTION_NODE) {
      // Source line breaks inside text are not paragraph breaks: only blocks make new lines.
      parts.push((node.nodeValue ?? '').replace(/\s+/g, ' '));
    } else if (node.nodeType === ELEMENT_NODE) {
      const name = (node as DomElement).localName;
      if (!SKIP.has(name)) {
        if (BLOCK.has(name)) parts.push('\n');
        const child: DomNode | null = node.firstChild;
        if (child) {
          node = child;
          continue;
        }
        if (BLOCK.has(name)) parts.push('\n');
      }
    }
    // Close `node` and its finished ancestors until one has a next sibling.
    for (;;) {
      const next: DomNode | null = node.nextSibling;
      if (next) {
        node = next;
        continue outer;
      }
      const parent: DomNode | null = node.parentNode;
      if (!parent || parent === root) break outer;
      node = parent;
      if (BLOCK.has((node as DomElement).localName)) parts.push('\n');
    }
  }
  return normalizeText(parts.join(''));
}
