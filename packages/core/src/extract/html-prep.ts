/** What {@link truncateUtf8} returns. */
export interface Truncated {
  html: string;
  /** True when the input was longer than the cap and was cut. */
  truncated: boolean;
}

/**
 * Cuts `html` to at most `maxBytes` UTF-8 bytes, on a character boundary. Pure; O(n) only when the
 * string could be over the cap.
 */
export function truncateUtf8(html: string, maxBytes: number): Truncated {
  // A UTF-16 code unit encodes to at most 3 UTF-8 bytes: short strings cannot be over the cap.
  if (html.length * 3 <= maxBytes) return { html, truncated: false };
  if (Buffer.byteLength(html, 'utf8') <= maxBytes) return { html, truncated: false };
  let cut = Buffer.from(html, 'utf8').subarray(0, Math.max(0, maxBytes)).toString('utf8');
  // A multi-byte character split at the cap decodes to U+FFFD: drop it.
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return { html: cut, truncated: true };
}

// Leftmost match wins, so a `<script>` inside a comment stays a comment and a `<!--` inside a script
// stays script, as in the HTML tokenizer. Script, style and noscript bodies cannot nest.
const INERT_RE = /<!--[\s\S]*?-->|<(script|style|noscript)\b([^>]*)>[\s\S]*?<\/\1\s*>/gi;

/**
 * Removes comments and `<script>`, `<style>`, `<noscript>` elements that Readability would delete
 * anyway, so the DOM is smaller and parses faster. JSON-LD scripts are kept: Readability reads the
 * title and byline from them. Text content is unchanged. Pure.
 */
export function stripInert(html: string): string {
  return html.replace(INERT_RE, (m: string, tag: string | undefined, attrs: string | undefined) =>
    tag !== undefined && tag.toLowerCase() === 'script' && /ld\+json/i.test(attrs ?? '') ? m : '',
  );
}

// Tags around which whitespace never separates words in extracted text: blocks (blockText puts
// them on their own lines) and head/embedded elements. Inline tags (a, span, b, img…) are absent:
// `<a>x</a> <a>y</a>` must stay two words.
const BLOCKISH =
  'address|article|aside|blockquote|body|br|dd|div|dl|dt|fieldset|figcaption|figure|footer|form|h[1-6]|head|header|hr|html|' +
  'iframe|legend|li|link|main|meta|nav|noscript|ol|option|p|script|section|select|style|table|tbody|td|tfoot|th|thead|title|tr|ul';
const INTER_BLOCK_WS_RE = new RegExp(`(<\\/?(?:${BLOCKISH})\\b[^>]*>)[ \\t\\r\\n\\f]+(?=<\\/?(?:${BLOCKISH})\\b)`, 'gi');

/**
 * Removes whitespace-only runs between two block-level tags (`</p>\n  <p>`). They become a third of
 * all DOM nodes on news pages, and every node costs in parsing and in Readability; the extracted
 * text is the same. Pure.
 */
export function dropInterBlockWhitespace(html: string): string {
  return html.replace(INTER_BLOCK_WS_RE, '$1');
}

const HEAD_PROBE = 64 * 1024;

/**
 * Whether linkedom can parse `html` faithfully: it needs an explicit `<html>` and `<body>` start tag
 * (without them linkedom builds no body at all). Pure.
 */
export function hasDocumentSkeleton(html: string): boolean {
  if (!/<html[\s>]/i.test(html.slice(0, HEAD_PROBE))) return false;
  return /<body[\s>]/i.test(html);
}

/**
 * Drops `</body>` and `</html>` end tags so linkedom keeps text that follows them (browsers and jsdom
 * move it into the body; linkedom drops it). Pure.
 */
export function dropDocumentEndTags(html: string): string {
  return html.replace(/<\/(?:body|html)\s*>/gi, '');
}
