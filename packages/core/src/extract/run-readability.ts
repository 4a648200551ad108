import { Readability } from '@mozilla/readability';
import type { DomDocument, DomElement } from './dom-types';
import { hasSingleTagInsideElement, isElementWithoutContent, isValidByline } from './readability-fast-paths';
import { adoptTagCensus } from './tag-census';

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
  _isElementWithoutContent(el: unknown): boolean;
  _isValidByline(node: DomElement, matchString: string): boolean;
  _hasSingleTagInsideElement(element: DomElement, tag: string): boolean;
  _grabArticle(page?: unknown): unknown;
  _unwrapNoscriptImages(doc: DomDocument): void;
  _removeScripts(doc: DomDocument): void;
  _prepDocument(): void;
  _doc: DomDocument;
}

/** A body as restoring it needs it. */
interface MutableBody extends DomElement {
  appendChild(node: unknown): unknown;
  replaceChildren(): void;
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

const newReader = (document: DomDocument): ReadabilityInternals =>
  new Readability(document as never, { serializer: (node: unknown) => node }) as unknown as ReadabilityInternals;

/**
 * What stock Readability's `page.innerHTML = pageCacheHtml` gives `body` before another attempt — the body as it was
 * when the first attempt began, after Readability's preparation (noscript images unwrapped, scripts and styles removed,
 * `<br>` chains made paragraphs, `<font>` made `<span>`) — built without serializing: the same steps run on a fresh
 * parse of the page, whose body's children are then moved into `body`. Stock serializes the whole body before the
 * first attempt (13 of 181 benchmark pages need a restore) and parses that HTML again at every restore; on linkedom a
 * doctype in that HTML corrupted the tree ("Known slow inputs" in docs/extraction.md), which cannot happen here.
 */
function restoreBody(document: DomDocument, body: MutableBody, fresh: DomDocument): void {
  const prep = newReader(fresh);
  prep._unwrapNoscriptImages(fresh);
  prep._removeScripts(fresh);
  prep._prepDocument();
  adoptTagCensus(document, fresh);
  body.replaceChildren();
  const from = fresh.body;
  if (!from) return;
  for (let child = from.firstChild; child; child = from.firstChild) body.appendChild(child);
}

function makeReader(document: DomDocument, fast: boolean, fresh?: () => DomDocument | undefined): ReadabilityInternals {
  const reader = newReader(document);
  reader._isProbablyVisible = isProbablyVisible;
  reader._isElementWithoutContent = isElementWithoutContent as (el: unknown) => boolean;
  reader._isValidByline = isValidByline;
  reader._hasSingleTagInsideElement = hasSingleTagInsideElement;
  if (!fast) {
    if (document.body) ignoreDoctypesInInnerHtml(document.body);
    return reader;
  }
  // Post-processing fixes URLs, classes and nesting of the article HTML; it never changes its text.
  reader._postProcessContent = () => {};
  // Readability serializes the whole body before its first attempt, only to restore it when an attempt finds under
  // 500 characters. Skip the copy; if a restore is asked for, rebuild the body from a fresh parse (restoreBody), or
  // when there is none (jsdom), start over slowly.
  const grab = reader._grabArticle.bind(reader);
  reader._grabArticle = (page?: unknown) => {
    const body = reader._doc.body;
    if (page != null || !body) return grab(page);
    Object.defineProperty(body, 'innerHTML', {
      configurable: true,
      get: () => '',
      set: () => {
        const doc = fresh?.();
        if (!doc) throw RETRY;
        restoreBody(reader._doc, body as MutableBody, doc);
      },
    });
    try {
      const article = grab(page);
      // parse() builds "Grabbed: " + the article's innerHTML for a log call that prints nothing: a serialization of
      // the whole article (toArticle puts the DOM's own accessor back)
      if (article) Object.defineProperty(article, 'innerHTML', { configurable: true, get: () => '' });
      return article;
    } finally {
      // Back to the DOM's own accessor (jsdom's window.close() sets it).
      delete (body as { innerHTML?: unknown }).innerHTML;
    }
  };
  return reader;
}

function toArticle(r: ParseResult): ReadabilityArticle | null {
  if (!r || r.content == null) return null;
  delete (r.content as { innerHTML?: unknown }).innerHTML;
  return {
    title: r.title ?? null,
    content: r.content as DomElement,
    byline: r.byline ?? null,
    excerpt: r.excerpt ?? null,
  };
}

/**
 * Runs Readability on `document` (which it mutates). When Readability's first attempt finds too little text it needs
 * the page as it was (about 7% of news pages): `fresh`, when given, returns a new parse of the same page (or undefined)
 * whose body's children then replace `document`'s body's (restoreBody; same DOM implementation only); otherwise, or
 * when `fresh` returns undefined, `reparse` must return a fresh copy of the same document (it may dispose `document`),
 * stock Readability runs on it, and that document is then the one mutated. Returns null when Readability finds no
 * article. Throws what Readability throws (RangeError on very deep DOMs).
 */
export function runReadability(
  document: DomDocument,
  reparse: () => DomDocument,
  fresh?: () => DomDocument | undefined,
): { article: ReadabilityArticle | null; document: DomDocument } {
  try {
    return { article: toArticle(makeReader(document, true, fresh).parse()), document };
  } catch (err) {
    if (err !== RETRY) throw err;
  }
  const again = reparse();
  return { article: toArticle(makeReader(again, false).parse()), document: again };
}
