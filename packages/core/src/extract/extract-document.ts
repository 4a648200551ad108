import type { TextQuality } from '../quality/assess-quality';
import { blockLines, blockText, normalizeText } from './block-text';
import { dropBoilerplate } from './boilerplate';
import type { DomDocument } from './dom-types';
import { ExtractError, isStackOverflow } from './extract-error';
import { dropInterBlockWhitespace, stripInert, truncateUtf8 } from './html-prep';
import { collectOutlinks } from './outlinks';
import { parseDom, type DomImpl, type ParsedDom } from './parse-dom';
import { runReadability } from './run-readability';
import { scanTagNesting } from './tag-nesting';
import { measureTree } from './tree-stats';

/** Input cap when none is given: 2 MiB of UTF-8. */
export const DEFAULT_MAX_BYTES = 2 * 1024 * 1024;
/** Element cap when none is given (the largest of 1,171 corpus pages has about 16,000). */
export const DEFAULT_MAX_ELEMENTS = 100_000;
/**
 * Nesting cap when none is given. Real pages stay at ≤ 51 (1,171 corpus pages). Readability's cost grows steeply with
 * depth (it overflows the stack near 5,000): the fuzz suite found a 250-deep chain of `<p><div>` (2 KB, no
 * `<html>`/`<body>`, so jsdom) taking ~5.8 s of CPU, 128-deep ~1 s; the cap was 256 until then (#24).
 */
export const DEFAULT_MAX_DEPTH = 128;
/** Outlink cap when none is given. */
export const DEFAULT_MAX_OUTLINKS = 1_000;

/** Options of {@link extractDocument}. */
export interface ExtractOptions {
  /** The page's URL: the base for relative links. */
  url: string;
  /** DOM to run Readability on; default `linkedom` (about 5× faster than jsdom, same text). */
  dom?: DomImpl;
  /** Input beyond this many UTF-8 bytes is cut off before parsing (`truncated` says so). */
  maxBytes?: number;
  /** More elements than this after parsing → `CCP_ERR_EXTRACT_TOO_MANY_ELEMENTS`. */
  maxElements?: number;
  /** Deeper nesting than this → `CCP_ERR_EXTRACT_DEPTH`. */
  maxDepth?: number;
  /** At most this many outlinks are kept (`outlinksTruncated` says when more existed). */
  maxOutlinks?: number;
  /**
   * Drop the boilerplate Readability leaves in the article (menus and teasers at its edges, captions, link lines:
   * {@link dropBoilerplate}); default true. `false` gives Readability's article text as it is.
   */
  boilerplate?: boolean;
}

/** The main text and links of one page. */
export interface Extracted {
  title: string | null;
  /**
   * Main text, one line per block, whitespace collapsed, boilerplate dropped unless `boilerplate: false`; the body
   * text when no article was found.
   */
  text: string;
  /** The `<html lang>` attribute, trimmed and lower-cased (`en-us`); null when absent or empty. */
  lang: string | null;
  /** Absolute http(s) links, fragment dropped, deduplicated in document order, capped. */
  outlinks: string[];
  byline?: string;
  excerpt?: string;
  /** The DOM actually used (`jsdom` when asked for, or as the last resort when linkedom threw on the page). */
  dom: DomImpl;
  /** True when Readability found an article; false when `text` is the whole body's text. */
  article: boolean;
  /** True when the input was cut at `maxBytes`. */
  truncated: boolean;
  outlinksTruncated: boolean;
  /**
   * The text's language and quality signals (quality/ `textQuality`), when the extractor computed them beside the text
   * (the extraction threads do); absent from extractDocument's own result.
   */
  quality?: TextQuality;
}

function normalizeLang(v: string | null | undefined): string | null {
  const t = v?.trim().toLowerCase().replace(/_/g, '-');
  return t ? t : null;
}

function cleanOptional(v: string | null | undefined): string | undefined {
  const t = v == null ? '' : normalizeText(v);
  return t ? t : undefined;
}

/**
 * The limits checked on the raw tags, before any DOM is built: building one is where a small page made to be deep
 * costs seconds (jsdom took 3–5 s over 11 KB of nested `<table><td>`), so it must not happen for a page the
 * check after parsing would refuse anyway. The estimate errs low ({@link scanTagNesting}); `guard` below still
 * checks the DOM itself.
 */
function preGuard(html: string, dom: DomImpl, maxElements: number, maxDepth: number): void {
  // Estimated for the parser that will run: jsdom follows the HTML standard; a page linkedom throws on goes to jsdom
  // too (parseDom), with this estimate made for htmlparser2, and only the check on the DOM guards it.
  const scan = scanTagNesting(html, maxElements, maxDepth, { html5: dom === 'jsdom' });
  if (scan.overElements) {
    throw new ExtractError('CCP_ERR_EXTRACT_TOO_MANY_ELEMENTS', 'page has more elements than the cap', {
      detail: { maxElements, dom: 'none' },
    });
  }
  if (scan.overDepth) {
    throw new ExtractError('CCP_ERR_EXTRACT_DEPTH', 'page is nested deeper than the cap', { detail: { maxDepth, dom: 'none' } });
  }
}

function guard(parsed: ParsedDom, maxElements: number, maxDepth: number): void {
  const root = parsed.document.documentElement;
  if (!root) return;
  const stats = measureTree(root, maxElements, maxDepth);
  if (stats.overElements) {
    throw new ExtractError('CCP_ERR_EXTRACT_TOO_MANY_ELEMENTS', 'page has more elements than the cap', {
      detail: { maxElements, dom: parsed.dom },
    });
  }
  if (stats.overDepth) {
    throw new ExtractError('CCP_ERR_EXTRACT_DEPTH', 'page is nested deeper than the cap', {
      detail: { maxDepth, dom: parsed.dom },
    });
  }
}

function extractFrom(doc: DomDocument, parsed: ParsedDom, html: string, opts: ExtractOptions, truncated: boolean): Extracted {
  const lang = normalizeLang(doc.documentElement?.getAttribute('lang'));
  // Before Readability: it removes navigation, footers and other non-article nodes.
  const out = collectOutlinks(doc, opts.url, opts.maxOutlinks ?? DEFAULT_MAX_OUTLINKS);
  const pageTitle = normalizeText(doc.title ?? '') || null;

  let current = parsed;
  const reparse = () => {
    current.dispose();
    current = parseDom(html, parsed.dom);
    return current.document;
  };
  try {
    // a restore moves the fresh parse's nodes into this document: only from the same implementation
    const fresh = () => {
      const copy = parseDom(html, parsed.dom);
      return copy.dom === 'linkedom' && parsed.dom === 'linkedom' ? copy.document : (copy.dispose(), undefined);
    };
    const { article, document } = runReadability(doc, reparse, fresh);
    const articleText = !article
      ? ''
      : opts.boilerplate === false
        ? blockText(article.content)
        : dropBoilerplate(blockLines(article.content))
            .map((l) => l.text)
            .join('\n');
    const text = articleText || (document.body ? blockText(document.body) : '');
    const result: Extracted = {
      title: (article?.title ? normalizeText(article.title) : '') || pageTitle,
      text,
      lang,
      outlinks: out.links,
      dom: parsed.dom,
      article: articleText !== '',
      truncated,
      outlinksTruncated: out.truncated,
    };
    const byline = cleanOptional(article?.byline);
    const excerpt = cleanOptional(article?.excerpt);
    if (byline !== undefined) result.byline = byline;
    if (excerpt !== undefined) result.excerpt = excerpt;
    return result;
  } finally {
    current.dispose();
  }
}

/**
 * Extracts the main text, title, language and outlinks of one HTML page with Mozilla Readability.
 * When Readability finds no article, `text` is the body's text (`article: false`), so short pages
 * still get text. Cost is bounded: input is cut at `maxBytes`, and pages over `maxElements` or
 * `maxDepth` are refused before any DOM is built (an estimate from the raw tags that errs low) and again on
 * the DOM before Readability runs (`detail.dom` says which: `none` for the first). It has no time limit of its own: run untrusted
 * pages through a pool that can kill a worker (`ExtractionPool` in @ccpipe/adapters).
 *
 * Pure and deterministic: no I/O, no scripts run, no resources loaded.
 *
 * @throws ExtractError `CCP_ERR_EXTRACT_TOO_MANY_ELEMENTS`, `CCP_ERR_EXTRACT_DEPTH` (also when
 *   Readability overflows the stack), `CCP_ERR_EXTRACT_FAILED` (anything else the DOM or Readability
 *   throws, with the original as `cause`).
 */
export function extractDocument(html: string, opts: ExtractOptions): Extracted {
  const { html: capped, truncated } = truncateUtf8(html, opts.maxBytes ?? DEFAULT_MAX_BYTES);
  const lean = dropInterBlockWhitespace(stripInert(capped));
  const maxElements = opts.maxElements ?? DEFAULT_MAX_ELEMENTS;
  const maxDepth = opts.maxDepth ?? DEFAULT_MAX_DEPTH;
  let parsed: ParsedDom | undefined;
  try {
    preGuard(lean, opts.dom ?? 'linkedom', maxElements, maxDepth);
    parsed = parseDom(lean, opts.dom ?? 'linkedom');
    guard(parsed, maxElements, maxDepth);
    const p = parsed;
    parsed = undefined; // extractFrom owns it from here
    return extractFrom(p.document, p, lean, opts, truncated);
  } catch (err) {
    if (err instanceof ExtractError) throw err;
    if (isStackOverflow(err)) {
      throw new ExtractError('CCP_ERR_EXTRACT_DEPTH', 'page nesting overflowed the stack', { cause: err });
    }
    throw new ExtractError('CCP_ERR_EXTRACT_FAILED', 'extraction failed', {
      cause: err,
      detail: { error: err instanceof Error ? err.message.slice(0, 200) : String(err).slice(0, 200) },
    });
  } finally {
    parsed?.dispose();
  }
}
