// Faster versions of the linkedom accessors Readability calls most, installed on extraction's own linkedom instance
// (lean-linkedom) only. Each returns what linkedom's own would; anything outside the fast case goes to linkedom's.
import { lacksTags } from './tag-census';

/** What the fast paths need of a linkedom instance's internals (its modules, loaded with it). */
export interface LinkedomInternals {
  symbols: { NEXT: symbol; END: symbol; MIME: symbol; CLASS_LIST: symbol; VALUE: symbol };
  /** The class behind Element, DocumentFragment and Document's querySelector(All). */
  ParentNode: { prototype: object };
  Element: { prototype: object };
  NodeList: new () => unknown[];
  /** linkedom's Attr, and its function that attaches a new attribute to an element (shared/attributes.js). */
  Attr: new (ownerDocument: unknown, name: string, value: string) => object;
  setAttribute(element: object, attribute: object): void;
}

/** A linkedom node as the fast paths walk it: symbol-keyed links between nodes in document order. */
interface Linked {
  [link: symbol]: Linked | undefined;
  nodeType: number;
  localName: string;
  ownerDocument: { [mime: symbol]: { ignoreCase: boolean } | undefined } | null;
  getAttributeNode(name: string): LinkedAttr | null;
}

/** A linkedom attribute: its value is kept under the VALUE symbol, its `value` setter also marks it changed. */
interface LinkedAttr {
  [value: symbol]: string;
  value: string;
}

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_SECTION_NODE = 4;
const TAG_LIST = /^\s*[a-zA-Z][a-zA-Z0-9]*(?:\s*,\s*[a-zA-Z][a-zA-Z0-9]*)*\s*$/;
const MAX_SELECTORS = 256;

/**
 * Installs the fast paths on one linkedom instance's prototypes (so never on the published instance):
 * - `querySelectorAll`/`querySelector` with a list of tag names (`"h1,h2"`, Readability's `_getAllNodesWithTag`; the
 *   outlinks' `"a, area"`): a walk that compares names, where linkedom compiles the selector with css-select on every
 *   call (11 % of extraction's CPU on the article benchmark). Same order, same skipping of `<template>` content, same
 *   case rule (HTML documents compare lower-cased names); other selectors and non-HTML documents go to linkedom's.
 * - `getElementsByTagName`: linkedom's walk, with the upper-cased names of the next point, and none at all for a
 *   name holding a lower-case ASCII letter (Readability's `"a"`, `"img"`, `"br"`…), which no upper-cased name equals.
 * - Both answer at once, with nothing found, when the document never made an element of the names asked for
 *   (tag-census).
 * - `tagName`/`nodeName` of elements: linkedom upper-cases the local name on every read; the upper-cased names are
 *   kept per name.
 * - `textContent` of elements: the text pieces concatenated as they are met, where linkedom collects them in an array
 *   and joins it (Readability reads the text of each candidate many times).
 * - `className` of an element without a class attribute and no class list yet is `''`, without making the empty
 *   DOMTokenList linkedom's getter makes (and keeps) for it; one whose class attribute is a single name is that name.
 * - Setting `className` of an element without a class list (the parser does it for every class attribute) writes the
 *   attribute as linkedom would — its names, each once, joined by one space — without making the class list
 *   (a DOMTokenList, filled twice and joined, for every class attribute of the page: 4 % of extraction's CPU on the
 *   trafilatura pages). The list is made when something asks for it, from the attribute, as linkedom makes it for a
 *   cloned element; it holds the same names. Nothing here writes a class attribute's value other than through
 *   `className` or `setAttribute`, which keep the two in step.
 */
export function installFastPaths(l: LinkedomInternals): void {
  const { NEXT, END, MIME, CLASS_LIST, VALUE } = l.symbols;
  const { NodeList } = l;
  const tagLists = new Map<string, Set<string> | null>();
  const tagsOf = (selectors: unknown): Set<string> | null => {
    if (typeof selectors !== 'string') return null;
    let tags = tagLists.get(selectors);
    if (tags === undefined) {
      tags = TAG_LIST.test(selectors) ? new Set(selectors.split(',').map((s) => s.trim().toLowerCase())) : null;
      if (tagLists.size < MAX_SELECTORS) tagLists.set(selectors, tags);
    }
    return tags;
  };
  // Document's own querySelector(All) call these with a stand-in `this` that has only ownerDocument, NEXT and END.
  const htmlDocument = (self: Linked): boolean => self.ownerDocument?.[MIME]?.ignoreCase === true;

  const upper = new Map<string, string>();
  const localCase = function (this: Linked): string {
    const name = this.localName;
    if (!this.ownerDocument?.[MIME]?.ignoreCase) return name;
    const known = upper.get(name);
    if (known !== undefined) return known;
    const u = name.toUpperCase();
    if (upper.size < 4096) upper.set(name, u);
    return u;
  };

  const pn = l.ParentNode.prototype as Record<string, unknown>;
  // linkedom's compares the name, then the upper-cased name made anew for every element that differs
  pn.getElementsByTagName = function getElementsByTagName(this: Linked, tagName: string): unknown {
    const found = new NodeList();
    if (typeof tagName === 'string' && lacksTags(this, [tagName])) return found;
    const end = this[END];
    if (typeof tagName === 'string' && HAS_ASCII_LOWER.test(tagName)) {
      // no upper-cased name holds a–z (checked over every code point), so only the name itself can match
      for (let next = this[NEXT]; next && next !== end; next = next[NEXT]) {
        if (next.nodeType === ELEMENT_NODE && next.localName === tagName) found.push(next);
      }
      return found;
    }
    for (let next = this[NEXT]; next && next !== end; next = next[NEXT]) {
      if (next.nodeType === ELEMENT_NODE && (next.localName === tagName || localCase.call(next) === tagName)) found.push(next);
    }
    return found;
  };
  const all = pn.querySelectorAll as (this: Linked, s: string) => unknown;
  const one = pn.querySelector as (this: Linked, s: string) => unknown;
  pn.querySelectorAll = function querySelectorAll(this: Linked, selectors: string): unknown {
    const tags = tagsOf(selectors);
    if (!tags || !htmlDocument(this)) return all.call(this, selectors);
    const found = new NodeList();
    if (lacksTags(this, tags)) return found;
    const end = this[END];
    let next = this[NEXT]!;
    while (next !== end) {
      if (next.nodeType === ELEMENT_NODE) {
        const name = next.localName;
        if (tags.has(name) || tags.has(name.toLowerCase())) found.push(next);
        next = name === 'template' ? next[END]! : next[NEXT]!;
      } else next = next[NEXT]!;
    }
    return found;
  };
  pn.querySelector = function querySelector(this: Linked, selectors: string): unknown {
    const tags = tagsOf(selectors);
    if (!tags || !htmlDocument(this)) return one.call(this, selectors);
    if (lacksTags(this, tags)) return null;
    const end = this[END];
    let next = this[NEXT]!;
    while (next !== end) {
      if (next.nodeType === ELEMENT_NODE) {
        const name = next.localName;
        if (tags.has(name) || tags.has(name.toLowerCase())) return next;
        next = name === 'template' ? next[END]! : next[NEXT]!;
      } else next = next[NEXT]!;
    }
    return null;
  };

  const el = l.Element.prototype;
  Object.defineProperty(el, 'tagName', { configurable: true, get: localCase });
  Object.defineProperty(el, 'nodeName', { configurable: true, get: localCase });

  const textContent = Object.getOwnPropertyDescriptor(el, 'textContent');
  if (textContent?.get && textContent.set) {
    Object.defineProperty(el, 'textContent', {
      configurable: true,
      get(this: Linked) {
        let text = '';
        const end = this[END];
        for (let next = this[NEXT]; next && next !== end; next = next[NEXT]) {
          const type = next.nodeType;
          if (type === TEXT_NODE || type === CDATA_SECTION_NODE) text += (next as unknown as { textContent: string }).textContent;
        }
        return text;
      },
      set: textContent.set,
    });
  }

  const className = Object.getOwnPropertyDescriptor(el, 'className');
  if (className?.get && className.set) {
    const { get, set } = className;
    const { Attr, setAttribute } = l;
    Object.defineProperty(el, 'className', {
      configurable: true,
      get(this: Linked) {
        if (!this[CLASS_LIST]) {
          const attr = this.getAttributeNode('class');
          if (!attr) return '';
          const value = attr[VALUE]!;
          // one name, or none: what the class list would hold, joined
          if (!HAS_SPACE.test(value)) return value;
        }
        return get.call(this) as unknown;
      },
      set(this: Linked, value: unknown) {
        if (this[CLASS_LIST]) {
          set.call(this, value);
          return;
        }
        const names = classNames(String(value));
        const attr = this.getAttributeNode('class');
        if (attr) attr.value = names;
        else setAttribute(this, new Attr(this.ownerDocument, 'class', names)); // sets className again, with attr
      },
    });
  }
}

const HAS_SPACE = /\s/;
const HAS_ASCII_LOWER = /[a-z]/;
const SPACES = /\s+/;

/** The value linkedom's class list gives `value`: its names split at whitespace, each once, in order, joined by a space. */
export function classNames(value: string): string {
  if (!HAS_SPACE.test(value)) return value;
  const names = new Set<string>();
  for (const name of value.split(SPACES)) if (name) names.add(name);
  return [...names].join(' ');
}
