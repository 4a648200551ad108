import type { TextLine } from './block-text';
import { WITHIN_CELL, WITHIN_FIGURE, WITHIN_HEADER, WITHIN_NAV } from './block-text';

// Thresholds, chosen on the scrapinghub article benchmark and checked against trafilatura's evaluation set (both in
// ../shared/corpus; docs/extraction.md has the figures). Round numbers on purpose: each rule is about a kind of
// block, not a page.

/** Share of a line's characters in links from which a line at the article's edge counts as navigation. */
const EDGE_LINK_DENSITY = 0.5;
/** Share of link text from which a line of several words anywhere counts as a link to another page ("Related: …"). */
const TEASER_LINK_DENSITY = 0.7;
/** Fewer words than this and a mostly-link line is a citation or a label ("[CNET]"), which stays. */
const TEASER_MIN_WORDS = 4;
/** A menu item or breadcrumb ahead of the article has at most this many words. */
const LEAD_MAX_WORDS = 10;
/** A teaser or tag list after the article has at most this many words. */
const TRAIL_MAX_WORDS = 30;
/** Lines this short between link lines ("Sign In", "Tags", "More from UK") go with them. */
const LABEL_MAX_WORDS = 3;
/**
 * The step takes the edges and inserts of an article, never most of it: a page where the rules would leave less than
 * this share of the characters is a list of links or a gallery of captions, and its text stays as Readability found it.
 */
const MIN_KEPT_SHARE = 0.25;
/** Lines of a `<header>` up to this long (a date, a byline, a kicker) are not the article; longer ones are its lead. */
const HEADER_MAX_WORDS = 10;

const WORD = /[\p{L}\p{N}_]+/gu;
const words = (text: string): number => text.match(WORD)?.length ?? 0;
// A written-out address is the author's text, link or not ("More info: www.example.com", "[1] https://…").
const URLISH = /:\/\/|www\.|^\S+\.[a-z]{2,}(?:\/\S*)?$/i;

function linkDensity(line: TextLine): number {
  return line.linkChars / line.text.length;
}

function isEdgeLink(line: TextLine, maxWords: number): boolean {
  return linkDensity(line) >= EDGE_LINK_DENSITY && !URLISH.test(line.text) && words(line.text) <= maxWords;
}

/** A short line that is not a link: "Tags", "More from UK", "Sign In". */
function isLabel(line: TextLine): boolean {
  return linkDensity(line) < EDGE_LINK_DENSITY && words(line.text) <= LABEL_MAX_WORDS;
}

/** Index of the last link line of the run of link lines and labels that `order` walks from the edge; -1 when none. */
function edgeRun(lines: readonly TextLine[], order: Iterable<number>, maxWords: number): number {
  let last = -1;
  for (const i of order) {
    const line = lines[i]!;
    if (isEdgeLink(line, maxWords)) last = i;
    else if (words(line.text) > LABEL_MAX_WORDS) break;
  }
  return last;
}

function* up(n: number): Generator<number> {
  for (let i = 0; i < n; i++) yield i;
}
function* down(n: number): Generator<number> {
  for (let i = n - 1; i >= 0; i--) yield i;
}

/**
 * The article's lines without the boilerplate Readability leaves in it, judged by link density, length, position and
 * the element a line sits in:
 * - a run of short link lines (and labels between them) that opens the article: a site menu, a breadcrumb;
 * - a run of link lines (and labels) that closes it, with the label just before it: tag lists, "related" teasers;
 * - anywhere, a line of at least four words that is mostly link text: "Related: …", "SEE MORE: …";
 * - text in a figure or figcaption (captions, credits, gallery counters) or in a nav;
 * - short lines of a `<header>`: dates, bylines, kickers.
 * Lines in table cells (unless in an edge run: a layout table's menu) and written-out web addresses stay. When the
 * rules would take three quarters of the characters or more, all lines stay: that page is no article with boilerplate
 * around it. Pure; linear in the lines.
 */
export function dropBoilerplate(lines: readonly TextLine[]): readonly TextLine[] {
  const n = lines.length;
  const drop = new Uint8Array(n);
  const lead = edgeRun(lines, up(n), LEAD_MAX_WORDS);
  for (let i = 0; i <= lead; i++) drop[i] = 1;
  const trail = edgeRun(lines, down(n), TRAIL_MAX_WORDS);
  if (trail >= 0) {
    let from = trail;
    while (from > 0 && isLabel(lines[from - 1]!)) from--;
    for (let i = from; i < n; i++) drop[i] = 1;
  }
  let kept = 0;
  let chars = 0;
  let keptChars = 0;
  for (let i = 0; i < n; i++) {
    const line = lines[i]!;
    const w = line.within;
    const density = linkDensity(line);
    if (
      (w & WITHIN_CELL) === 0 && // a table is data, links or not, also in a figure
      ((w & (WITHIN_FIGURE | WITHIN_NAV)) !== 0 ||
        ((w & WITHIN_HEADER) !== 0 && (density >= EDGE_LINK_DENSITY || words(line.text) <= HEADER_MAX_WORDS)) ||
        (density >= TEASER_LINK_DENSITY && !URLISH.test(line.text) && words(line.text) >= TEASER_MIN_WORDS))
    ) {
      drop[i] = 1;
    }
    chars += line.text.length;
    if (drop[i] === 0) {
      kept++;
      keptChars += line.text.length;
    }
  }
  if (kept === n || keptChars < MIN_KEPT_SHARE * chars) return lines;
  return lines.filter((_, i) => drop[i] === 0);
}
