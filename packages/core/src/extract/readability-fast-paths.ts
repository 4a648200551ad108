import { CDATA_SECTION_NODE, ELEMENT_NODE, TEXT_NODE, type DomElement, type DomNode } from './dom-types';

/** The members of a DOM element the replacements below read, beyond dom-types'. */
interface ElementWithChildren extends DomElement {
  readonly children: ArrayLike<DomElement>;
  getElementsByTagName(name: string): ArrayLike<DomElement>;
}

const NOT_WHITESPACE = /\S/;

/**
 * Whether any text under `root` is other than whitespace: what `!root.textContent.trim().length` asks (JS's trim and
 * `\s` strip the same characters; textContent is the text and CDATA nodes' data), without joining the subtree's text
 * into one string. Returns at the first such text node. Iterative: safe on any depth.
 */
export function hasNonWhitespaceText(root: DomNode): boolean {
  let node: DomNode | null = root.firstChild;
  while (node) {
    const type = node.nodeType;
    if (type === TEXT_NODE || type === CDATA_SECTION_NODE) {
      if (NOT_WHITESPACE.test(node.nodeValue ?? '')) return true;
    } else if (type === ELEMENT_NODE && node.firstChild) {
      node = node.firstChild;
      continue;
    }
    while (node && node !== root && !node.nextSibling) node = node.parentNode;
    if (!node || node === root) return false;
    node = node.nextSibling;
  }
  return false;
}

/**
 * Readability 0.6.0's `_isElementWithoutContent` with the same answer: an element with no text but whitespace and no
 * element children other than `<br>`/`<hr>` descendants. Readability asks it of every `<div>`, `<section>`, `<header>`
 * and heading it walks, each time joining the element's whole text (6 % of extraction's CPU on the article benchmark).
 */
export function isElementWithoutContent(node: DomNode): boolean {
  if (node.nodeType !== ELEMENT_NODE || hasNonWhitespaceText(node)) return false;
  const el = node as ElementWithChildren;
  const children = el.children.length;
  return !children || children === el.getElementsByTagName('br').length + el.getElementsByTagName('hr').length;
}

/** What the replacements below read of the Readability instance they are called on. */
interface ReadabilityPatterns {
  REGEXPS: { byline: RegExp; hasContent: RegExp };
}

/**
 * Readability 0.6.0's `_isValidByline` with the same answer: the element's rel, itemprop or class and id say byline,
 * and its trimmed text has 1–99 characters. Readability asks it of every element it walks until it has a byline — the
 * `<html>` and `<body>` elements first — reading the text before the attributes, which joins the whole page's text
 * several times over (4 % of extraction's CPU on the trafilatura pages); here the text is read only when the
 * attributes already say byline. Neither read has side effects, so the order changes nothing else.
 */
export function isValidByline(this: ReadabilityPatterns, node: DomElement, matchString: string): boolean {
  const rel = node.getAttribute('rel');
  const itemprop = node.getAttribute('itemprop');
  if (!(rel === 'author' || (itemprop && itemprop.includes('author')) || this.REGEXPS.byline.test(matchString))) return false;
  const length = node.textContent!.trim().length;
  return length > 0 && length < 100;
}

/** An element as {@link hasSingleTagInsideElement} reads it. */
interface ElementWithTag extends DomElement {
  readonly tagName: string;
}

/**
 * Readability 0.6.0's `_hasSingleTagInsideElement` with the same answer: exactly one element child, with that tag name,
 * and no text child ending in a character other than whitespace. Readability asks it of every `<div>` it walks
 * (twice for some); it listed all element children (`children`) to count them, here the count stops at the second.
 */
export function hasSingleTagInsideElement(this: ReadabilityPatterns, element: DomElement, tag: string): boolean {
  const only = element.firstElementChild as ElementWithTag | null;
  if (!only || only.nextElementSibling || only.tagName !== tag) return false;
  for (let node = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === TEXT_NODE && this.REGEXPS.hasContent.test(node.textContent!)) return false;
  }
  return true;
}
