import type { DomElement } from './dom-types';

/** What {@link measureTree} found, stopping early once a limit is passed. */
export interface TreeStats {
  /** Elements counted (exact when `overElements` is false). */
  elements: number;
  /** Deepest element nesting seen, the root being depth 1. */
  depth: number;
  overElements: boolean;
  overDepth: boolean;
}

/**
 * Counts the elements under and including `root` and their nesting depth, iteratively (the tree may
 * be deeper than the JS stack). Stops as soon as `maxElements` or `maxDepth` is passed, so its cost
 * is bounded by the limits, not by the page.
 */
export function measureTree(root: DomElement, maxElements: number, maxDepth: number): TreeStats {
  let elements = 0;
  let depth = 1;
  let deepest = 0;
  let el: DomElement | null = root;
  while (el) {
    elements++;
    if (depth > deepest) deepest = depth;
    if (elements > maxElements) return { elements, depth: deepest, overElements: true, overDepth: false };
    if (deepest > maxDepth) return { elements, depth: deepest, overElements: false, overDepth: true };
    const child: DomElement | null = el.firstElementChild;
    if (child) {
      el = child;
      depth++;
      continue;
    }
    while (el && el !== root && !el.nextElementSibling) {
      el = el.parentNode as DomElement | null;
      depth--;
    }
    if (!el || el === root) break;
    el = el.nextElementSibling;
  }
  return { elements, depth: deepest, overElements: false, overDepth: false };
}
