import { Readability } from '@mozilla/readability';
import type { DomDocument, DomElement } from './dom-types';

/** What extraction keeps of Readability's result. */
export interface ReadabilityArticle {
  title: string | null;
  /** The article's root element (the serializer hands back the node itself, unserialized). */
  content: DomElement;
  byline: string | null;
  excerpt: string | null;
}

type ParseResult = {
  title?: string | null;
  content?: unknown;
  byline?: string | null;
  excerpt?: string | null;
} | null;

// Readability 0.6.0 internals we replace. Pinned by package.json; the corpus tests fail if they move.
interface ReadabilityInternals {
  parse(): ParseResult;
  _postProcessContent(el: unknown): void;
  _isProbablyVisible(el: DomElement & { hasAttribute(n: string): boolean; className?: unknown }): boolean;
  _grabArticle(page?: unknown): unknown;
  _doc: DomDocument;
}

/** Thrown from the fast path when Readability wants to restore the page for another attempt. */
const RETRY = Symbol('readability-retry');

const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!\s*important\s*)?(?:;|$)/i;

function isProbablyVisible(node: DomElement & { hasAttribute(n: string): boolean; className?: unknown }): boolean {
  // Same test as Readability's, reading the style attribute instead of building a CSSStyleDeclaration.
  const style = node.getAttribute('style');
  if (style !== null && HIDDEN_STYLE.test(style)) return false;
  if (node.hasAttribute('hidden')) return false;
  if (node.getAttribute('aria-hidden') !== 'true') return true;
  const cls = node.className;
  return typeof cls === 'string' && cls.includes('fallback-image');
}

const DOCTYPE_RE = /<!doctype[^>]*>/gi;

/**
 * Makes `body.innerHTML = …` ignore `<!DOCTYPE …>`, as the HTML standard's fragment parsing does (and jsdom). linkedom
 * moves a doctype it parses there into the body, which corrupts its tree: stock Readability, restoring the body from
 * its serialization before another attempt, then throws or never returns. A doctype gets into that serialization
 * behind text that does not serialize back as it was parsed — a `<title>` in the body whose text holds `</title>`, a
 * comment holding `-->` (the fuzz suite found both; `<html><body><math><title>a &lt;/title>b <!DOCTYPE html>` never
 * returned). Only the body's own `innerHTML` is changed, on the document of the slow attempt.
 */
function ignoreDoctypesInInnerHtml(body: DomElement): void {
  let desc: PropertyDescriptor | undefined;
  for (let proto: object | null = Object.getPrototypeOf(body); proto && !desc; proto = Object.getPrototypeOf(proto)) {
    desc = Object.getOwnPropertyDescriptor(proto, 'innerHTML');
  }
  const { get, set } = desc ?? {};
  if (!get || !set) return;
  Object.defineProperty(body, 'innerHTML', {
    configurable: true,
    get: () => get.call(body) as unknown,
    set: (html: unknown) => set.call(body, String(html).replace(DOCTYPE_RE, '')),
  });
}

function makeReader(document: DomDocument, fast: boolean): ReadabilityInternals {
  const reader = new Readability(document as never, {
    serializer: (node: unknown) => node,
  }) as unknown as ReadabilityInternals;
  reader._isProbablyVisible = isProbablyVisible;
  if (!fast) {
    if (document.body) ignoreDoctypesInInnerHtml(document.body);
    return reader;
  }
  // Post-processing fixes URLs, classes and nesting of the article HTML; it never changes its text.
  reader._postProcessContent = () => {};
  // Readability serializes the whole body before its first attempt, only to restore it when an
  // attempt finds under 500 characters. Skip the copy; if a restore is asked for, start over slowly.
  const grab = reader._grabArticle.bind(reader);
  reader._grabArticle = (page?: unknown) => {
    const body = reader._doc.body;
    if (page != null || !body) return grab(page);
    Object.defineProperty(body, 'innerHTML', {
      configurable: true,
      get: () => '',
      set: () => {
        throw RETRY;
      },
    });
    try {
      return grab(page);
    } finally {
      // Back to the DOM's own accessor (jsdom's window.close() sets it).
      delete (body as { innerHTML?: unknown }).innerHTML;
    }
  };
  return reader;
}

function toArticle(r: ParseResult): ReadabilityArticle | null {
  if (!r || r.content == null) return null;
  return {
    title: r.title ?? null,
    content: r.content as DomElement,
    byline: r.byline ?? null,
    excerpt: r.excerpt ?? null,
  };
}

/**
 * Runs Readability on `document` (which it mutates). `reparse` must return a fresh copy of the same
 * document: it is called when Readability's first attempt finds too little text and needs the page
 * as it was (about 7% of news pages), and that document is then the one mutated. Returns null when
 * Readability finds no article. Throws what Readability throws (RangeError on very deep DOMs).
 */
export function runReadability(
  document: DomDocument,
  reparse: () => DomDocument,
): { article: ReadabilityArticle | null; document: DomDocument } {
  try {
    return { article: toArticle(makeReader(document, true).parse()), document };
  } catch (err) {
    if (err !== RETRY) throw err;
  }
  const fresh = reparse();
  return { article: toArticle(makeReader(fresh, false).parse()), document: fresh };
}
