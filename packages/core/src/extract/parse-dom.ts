import type { DomDocument } from './dom-types';
import { cdataAsHtmlParsesIt, dropDocumentEndTags, hasDocumentSkeleton } from './html-prep';

/** The DOM implementations extraction can run Readability on. */
export type DomImpl = 'linkedom' | 'jsdom';

/** A parsed document and how to release it. */
export interface ParsedDom {
  document: DomDocument;
  /** The DOM actually used: `jsdom` when linkedom could not take the page. */
  dom: DomImpl;
  /** Releases the DOM (closes jsdom's window). Idempotent; never throws. */
  dispose(): void;
}

type LinkedomModule = { parseHTML(html: string): { document: unknown } };
type JsdomModule = {
  JSDOM: new (html: string, opts: { virtualConsole: unknown }) => { window: { document: unknown; close(): void } };
  VirtualConsole: new () => unknown;
};

// Both are required lazily: jsdom takes ~0.3 s to load and most processes never need it. linkedom is
// an ES module package whose CommonJS build is only reachable through require().
let linkedom: LinkedomModule | undefined;
let jsdom: JsdomModule | undefined;

function parseWithLinkedom(html: string): DomDocument | undefined {
  linkedom ??= require('linkedom') as LinkedomModule;
  const document = linkedom.parseHTML(dropDocumentEndTags(cdataAsHtmlParsesIt(html))).document as DomDocument;
  if (document.documentElement?.localName !== 'html' || !document.body) return undefined;
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
 * Parses `html` into a DOM. With `linkedom`, pages without an explicit `<html>` and `<body>` (which
 * linkedom leaves body-less) go to jsdom instead, and `</body>`/`</html>` end tags are dropped so
 * trailing text is kept. Never runs scripts or loads resources. Throws what the DOM library throws.
 */
export function parseDom(html: string, dom: DomImpl): ParsedDom {
  if (dom === 'linkedom' && hasDocumentSkeleton(html)) {
    const document = parseWithLinkedom(html);
    if (document) return { document, dom: 'linkedom', dispose() {} };
  }
  return parseWithJsdom(html);
}
