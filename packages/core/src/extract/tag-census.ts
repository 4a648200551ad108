// Which element names a document can hold, so that a tag-list query for names it never made answers at once: half of
// the nodes the fast paths' walks visit on the trafilatura pages were in walks that found nothing (`<style>`, `<font>`,
// `<noscript>`, `<base>` — stripInert has removed most scripts, styles and noscripts — or `<embed>`, `<object>`,
// `<iframe>`, `<input>` … that Readability looks for in every article).

/** What the census needs of a linkedom instance's internals (its modules, loaded with it). */
export interface CensusInternals {
  /** html/document.js: every HTML element of a parse or a script is made by its `createElement`. */
  HTMLDocument: { prototype: object };
  /** interface/document.js: `createElementNS` makes SVG elements itself; `importNode` brings nodes in. */
  Document: { prototype: object };
  /** interface/element.js: `innerHTML`, `outerHTML` and `insertAdjacentHTML` parse into another document first. */
  Element: { prototype: object };
  /** interface/shadow-root.js: its `innerHTML` too. */
  ShadowRoot: { prototype: object };
}

/**
 * The names of the elements made for a group of documents whose nodes may have been moved between them, in each case
 * a query can ask for them (as made, lower- and upper-cased). `unknown` once nodes came in some other way: no answers
 * from it then. Groups join (adoptTagCensus) by pointing one at the other.
 */
interface Census {
  made: Set<string>;
  names: Set<string>;
  unknown: boolean;
  into: Census | undefined;
}

const CENSUS = Symbol('ccpipe.tagCensus');
const DOCUMENT_NODE = 9;

type Counted = { [CENSUS]?: Census; nodeType?: number; ownerDocument?: Counted | null };

const root = (c: Census): Census => {
  while (c.into) c = c.into;
  return c;
};

function censusOf(doc: Counted | null | undefined, create: boolean): Census | undefined {
  if (!doc) return undefined;
  const c = doc[CENSUS];
  if (c) return root(c);
  if (!create) return undefined;
  return (doc[CENSUS] = { made: new Set(), names: new Set(), unknown: false, into: undefined });
}

function note(doc: Counted, localName: unknown): void {
  const c = censusOf(doc, true)!;
  if (typeof localName !== 'string') {
    c.unknown = true;
    return;
  }
  if (c.made.has(localName)) return;
  c.made.add(localName);
  c.names.add(localName).add(localName.toLowerCase()).add(localName.toUpperCase());
}

const documentOf = (self: Counted): Counted | null | undefined => (self.nodeType === DOCUMENT_NODE ? self : self.ownerDocument);

function markUnknown(self: Counted): void {
  const doc = documentOf(self);
  if (doc) censusOf(doc, true)!.unknown = true;
}

/**
 * True when no element named any of `names` can be under `self` (an element, a document, or linkedom's stand-in
 * for a document with `ownerDocument`): its document's group never made one. A query comparing `localName`, or its
 * lower- or upper-cased form, with one of `names` then finds nothing. False whenever that is not known.
 */
export function lacksTags(self: object, names: Iterable<string>): boolean {
  const c = censusOf(documentOf(self as Counted), false);
  if (!c || c.unknown) return false;
  for (const name of names) if (c.names.has(name)) return false;
  return true;
}

/**
 * Joins the census of `from` to that of `target`, before nodes of `from` are moved into `target` (linkedom leaves
 * their `ownerDocument` as it was, and either document may then make elements under nodes of the other). Idempotent;
 * does nothing for documents without a census (jsdom's, the shared linkedom's).
 */
export function adoptTagCensus(target: unknown, from: unknown): void {
  const a = censusOf(target as Counted, false);
  const b = censusOf(from as Counted, false);
  if (!a || !b || a === b) {
    if (a && !b && from) markUnknown(from as Counted);
    if (b && !a && target) markUnknown(target as Counted);
    return;
  }
  for (const n of b.made) a.made.add(n);
  for (const n of b.names) a.names.add(n);
  a.unknown ||= b.unknown;
  b.into = a;
}

type Method = (this: Counted, ...args: unknown[]) => unknown;

function wrapMethod(proto: object, name: string, after: (self: Counted, result: unknown) => void): void {
  const own = Object.getOwnPropertyDescriptor(proto, name);
  const fn = own?.value as Method | undefined;
  if (typeof fn !== 'function') throw new Error(`linkedom has no ${name} where expected`);
  Object.defineProperty(proto, name, {
    ...own,
    value: function (this: Counted, ...args: unknown[]) {
      const result = fn.apply(this, args);
      after(this, result);
      return result;
    },
  });
}

function wrapSetter(proto: object, name: string): void {
  const own = Object.getOwnPropertyDescriptor(proto, name);
  const set = own?.set;
  if (!set) throw new Error(`linkedom has no ${name} setter where expected`);
  Object.defineProperty(proto, name, {
    ...own,
    set(this: Counted, value: unknown) {
      set.call(this, value);
      markUnknown(this);
    },
  });
}

/**
 * Keeps a census per document of one linkedom instance (never the published one): the elements its
 * `createElement`/`createElementNS` make (the parser's, Readability's, clones'). Nodes that come into a document
 * otherwise — parsed by `innerHTML`, `outerHTML` or `insertAdjacentHTML`, or imported — make its census
 * unknown; moving nodes between documents needs {@link adoptTagCensus} first. Throws when linkedom's files are not as
 * 0.18.14 has them (the caller then uses linkedom as published).
 */
export function installTagCensus(l: CensusInternals): void {
  const made = (self: Counted, el: unknown) => note(self, (el as { localName?: unknown } | null)?.localName);
  wrapMethod(l.HTMLDocument.prototype, 'createElement', made);
  wrapMethod(l.Document.prototype, 'createElementNS', made);
  wrapMethod(l.Document.prototype, 'importNode', (self) => markUnknown(self));
  wrapMethod(l.Element.prototype, 'insertAdjacentHTML', (self) => markUnknown(self));
  wrapSetter(l.Element.prototype, 'innerHTML');
  wrapSetter(l.Element.prototype, 'outerHTML');
  wrapSetter(l.ShadowRoot.prototype, 'innerHTML');
}
