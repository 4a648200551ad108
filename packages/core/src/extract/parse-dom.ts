import { withDocumentSkeleton } from './document-skeleton';
import type { DomDocument, DomElement } from './dom-types';
import { isStackOverflow } from './extract-error';
import { cdataAsHtmlParsesIt, dropDocumentEndTags, hasDocumentSkeleton } from './html-prep';
import { loadLinkedom, type LinkedomModule } from './lean-linkedom';

/** The DOM implementations extraction can run Readability on. */
export type DomImpl = 'linkedom' | 'jsdom';

/** A parsed document and how to release it. */
export interface ParsedDom {
  document: DomDocument;
  /** The DOM actually used: `jsdom` when asked for, or when linkedom threw on the page. */
  dom: DomImpl;
  /** Releases the DOM (closes jsdom's window). Idempotent; never throws. */
  dispose(): void;
}

type JsdomModule = {
  JSDOM: new (html: string, opts: { virtualConsole: unknown }) => { window: { document: unknown; close(): void } };
  VirtualConsole: new () => unknown;
};

// Both are required lazily: jsdom takes ~0.3 s to load and most processes never need it. linkedom is
// an ES module package whose CommonJS build is only reachable through require(); extraction loads its own (lean-linkedom).
let linkedom: LinkedomModule | undefined;
let jsdom: JsdomModule | undefined;

/** Whether `node` is inside `<svg>` or `<math>`, whose `<title>` is not the document's. */
function inForeign(node: DomElement): boolean {
  for (let p = node.parentNode; p; p = p.parentNode) {
    const name = (p as Partial<DomElement>).localName;
    if (name === 'svg' || name === 'math') return true;
  }
  return false;
}

/**
 * linkedom's `document.title` reads only a `<title>` in the head; the HTML standard (and jsdom) take the first one
 * anywhere outside SVG and MathML, whitespace collapsed. On a page whose markup begins with content (a PHP warning,
 * then `<html><head><title>`) the parser puts the title in the body, so a synthesized document gets the standard's
 * reading when its head has none.
 */
function titleFromTree(document: DomDocument): void {
  if (document.title) return;
  Object.defineProperty(document, 'title', {
    configurable: true,
    get: () => {
      const titles = document.querySelectorAll('title');
      for (let i = 0; i < titles.length; i++) {
        const t = titles[i]!;
        if (!inForeign(t)) return (t.textContent ?? '').replace(/[\t\n\f\r ]+/g, ' ').trim();
      }
      return '';
    },
  });
}

function parseWithLinkedom(html: string): DomDocument | undefined {
  linkedom ??= loadLinkedom().linkedom;
  const prepared = dropDocumentEndTags(cdataAsHtmlParsesIt(html));
  if (hasDocumentSkeleton(html)) {
    const document = linkedom.parseHTML(prepared).document as DomDocument;
    if (document.documentElement?.localName === 'html') return document;
    // content before <html> (a PHP warning): linkedom made it the root
  }
  const document = linkedom.parseHTML(withDocumentSkeleton(prepared)).document as DomDocument;
  if (document.documentElement?.localName !== 'html') return undefined; // withDocumentSkeleton always starts one
  titleFromTree(document);
  return document;
}

function parseWithJsdom(html: string): ParsedDom {
  jsdom ??= require('jsdom') as JsdomModule;
  // A virtual console with no listeners: jsdom would print CSS parse errors (core never logs).
  const window = new jsdom.JSDOM(html, { virtualConsole: new jsdom.VirtualConsole() }).window;
  let closed = false;
  return {
    document: window.document as DomDocument,
    dom: 'jsdom',
    dispose() {
      if (closed) return;
      closed = true;
      try {
        window.close();
      } catch {
        // close() detaches nodes recursively and overflows the stack on very deep documents; the
        // window is unreachable afterwards either way and the GC takes it.
      }
    },
  };
}

/**
 * Parses `html` into a DOM. With `linkedom`, a page without an explicit `<html>` and `<body>`, or with content
 * before `<html>` (linkedom would build no body, or make that content the root), is first given the skeleton the
 * HTML parser would build (withDocumentSkeleton), and `</body>`/`</html>` end tags are dropped so trailing text is
 * kept. jsdom is the last resort: only when linkedom throws (other than by overflowing the stack) is the page
 * parsed again with jsdom (`dom: 'jsdom'` in the result). Never runs scripts or loads resources. Throws what the
 * DOM library throws.
 */
export function parseDom(html: string, dom: DomImpl): ParsedDom {
  if (dom === 'linkedom') {
    let document: DomDocument | undefined;
    try {
      document = parseWithLinkedom(html);
    } catch (err) {
      if (isStackOverflow(err)) throw err; // a page that deep would cost jsdom far more
    }
    if (document) return { document, dom: 'linkedom', dispose() {} };
  }
  return parseWithJsdom(html);
}
