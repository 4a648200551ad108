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

const INERT_TAGS = ['script', 'style', 'noscript'] as const;
type InertTag = (typeof INERT_TAGS)[number];
// An end tag is its name followed by whitespace, '/' or '>', and runs to the next '>' (the HTML tokenizer reads what
// lies between as attributes): `</script\n <!--x-->` ends the script at the comment's '>'. Requiring `</script>` ran a
// page's script on to a later one and removed everything between, its article and links included (#21).
const endTag = (name: string): RegExp => new RegExp(`</${name}(?=[\\t\\n\\f\\r />])[^>]*>`, 'gi');
const INERT_END: Record<InertTag, RegExp> = { script: endTag('script'), style: endTag('style'), noscript: endTag('noscript') };
const isWordChar = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/** The inert tag whose name starts at `at` (any case) and ends at a non-word character, if any. */
function inertTagAt(html: string, at: number): InertTag | undefined {
  const c = html.charCodeAt(at) | 0x20; // lower case
  if (c !== 115 && c !== 110) return undefined; // 's', 'n': most tags are neither
  for (const tag of INERT_TAGS) {
    if (html.length > at + tag.length && html.slice(at, at + tag.length).toLowerCase() === tag && !isWordChar(html.charCodeAt(at + tag.length))) return tag;
  }
  return undefined;
}

/**
 * `indexOf`/`exec` from positions that only grow, remembering the last answer: a needle that is missing (an
 * unterminated comment or script) is searched for once, not once per `<` after it (which made a page of 40,000
 * `<!--` take 2 s and one of `<script ` 17 s as a regex).
 */
class ForwardSearch {
  private from = -1;
  private at = -1;
  private end = -1;

  constructor(private readonly find: (from: number) => [number, number]) {}

  /** Start and end of the first match at or after `from`, or -1. */
  next(from: number): [number, number] {
    if (this.from < 0 || from < this.from || (this.at >= 0 && this.at < from)) {
      this.from = from;
      [this.at, this.end] = this.find(from);
    }
    return [this.at, this.end];
  }
}

/**
 * Removes comments and `<script>`, `<style>`, `<noscript>` elements that Readability would delete
 * anyway, so the DOM is smaller and parses faster. JSON-LD scripts are kept: Readability reads the
 * title and byline from them. Text content is unchanged. Leftmost match wins, as in the HTML tokenizer: a
 * `<script>` inside a comment stays a comment and a `<!--` inside a script stays script; an unterminated
 * comment or element is left as it is. Linear in the input. Pure.
 */
export function stripInert(html: string): string {
  const indexOf = (needle: string): ForwardSearch => new ForwardSearch((from) => {
    const at = html.indexOf(needle, from);
    return [at, at < 0 ? -1 : at + needle.length];
  });
  const commentEnd = indexOf('-->');
  const tagEnd = indexOf('>');
  const elementEnd = Object.fromEntries(INERT_TAGS.map((tag) => [tag, new ForwardSearch((from) => {
    const re = INERT_END[tag];
    re.lastIndex = from;
    const m = re.exec(html);
    return m ? [m.index, m.index + m[0].length] : [-1, -1];
  })])) as Record<InertTag, ForwardSearch>;

  let out = '';
  let kept = 0; // html[kept…] is not yet copied to out
  let i = 0;
  for (;;) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    i = lt + 1;
    if (html.startsWith('<!--', lt)) {
      const [, end] = commentEnd.next(lt + 4);
      if (end < 0) continue;
      out += html.slice(kept, lt);
      kept = i = end;
      continue;
    }
    const tag = inertTagAt(html, lt + 1);
    if (!tag) continue;
    const [gt] = tagEnd.next(lt + 1);
    if (gt < 0) break; // every match needs a '>' after it
    const [, end] = elementEnd[tag].next(gt + 1);
    if (end < 0) continue;
    i = end;
    if (tag === 'script' && /ld\+json/i.test(html.slice(lt + 1 + tag.length, gt))) continue;
    out += html.slice(kept, lt);
    kept = end;
  }
  return kept === 0 ? html : out + html.slice(kept);
}

// Tags around which whitespace never separates words in extracted text: blocks (blockText puts
// them on their own lines) and head/embedded elements. Inline tags (a, span, b, img…) are absent:
// `<a>x</a> <a>y</a>` must stay two words.
const BLOCKISH =
  'address|article|aside|blockquote|body|br|dd|div|dl|dt|fieldset|figcaption|figure|footer|form|h[1-6]|head|header|hr|html|' +
  'iframe|legend|li|link|main|meta|nav|noscript|ol|option|p|script|section|select|style|table|tbody|td|tfoot|th|thead|title|tr|ul';
// `[^<>]*`, not `[^>]*`: a tag without a closing '>' made every later attempt scan to the end of the input (a page
// of 40,000 `<div ` took 8.6 s). A tag with a '<' inside an attribute keeps its whitespace, which changes no text.
const INTER_BLOCK_WS_RE = new RegExp(`(<\\/?(?:${BLOCKISH})\\b[^<>]*>)[ \\t\\r\\n\\f]+(?=<\\/?(?:${BLOCKISH})\\b)`, 'gi');

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

/** Start of the last match of `re` (global) before a position, for positions that only grow: linear over all calls. */
class LastBefore {
  private last = -1;
  private next: number;

  constructor(private readonly html: string, private readonly re: RegExp) {
    this.next = this.find(0);
  }

  private find(from: number): number {
    this.re.lastIndex = from;
    return this.re.exec(this.html)?.index ?? -1;
  }

  before(at: number): number {
    while (this.next >= 0 && this.next < at) {
      this.last = this.next;
      this.next = this.find(this.next + 1);
    }
    return this.last;
  }
}

/**
 * Rewrites each `<![CDATA[` as the HTML parser reads it, before linkedom sees the page. Outside `<svg>`/`<math>` it
 * is a bogus comment that ends at the next `>` (or the end of the input); inside, a CDATA section whose content is
 * text, to `]]>` or the end — it becomes that text, escaped. htmlparser2 makes a comment of either that runs to
 * `]]>` or to the end, whose data may hold `-->`: text leaks out of it, and when Readability restores the body
 * from its serialization (`innerHTML`), a `<!DOCTYPE` behind that `-->` corrupts linkedom's tree and Readability
 * never returns (73 bytes: `<html><body><li><![CDATA[-->lorem … '<!DOCTYPE html>`; in SVG
 * `<svg><![CDATA[<li>--> <!DOCTYPE html>`; both found by the fuzz suite). "Inside" means after the last `<svg`
 * (`<math`) before it and no `</svg` (`</math`) since, any case. Linear in the input (it searched back from every
 * CDATA start until #24: 440 KB of `<![CDATA[x>` took 32 s). Pure.
 */
export function cdataAsHtmlParsesIt(html: string): string {
  if (!html.includes('<![CDATA[')) return html;
  const [svg, svgEnd, math, mathEnd] = [/<svg/gi, /<\/svg/gi, /<math/gi, /<\/math/gi].map((re) => new LastBefore(html, re)) as [
    LastBefore, LastBefore, LastBefore, LastBefore,
  ];
  let out = '';
  let kept = 0;
  for (let at = html.indexOf('<![CDATA['); at >= 0; at = html.indexOf('<![CDATA[', kept)) {
    const from = at + 9;
    out += html.slice(kept, at);
    if (svg.before(at) > svgEnd.before(at) || math.before(at) > mathEnd.before(at)) {
      const close = html.indexOf(']]>', from);
      const text = html.slice(from, close < 0 ? html.length : close);
      out += text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
      kept = close < 0 ? html.length : close + 3;
    } else {
      const gt = html.indexOf('>', from);
      out += `<!--[CDATA[${html.slice(from, gt < 0 ? html.length : gt)}-->`;
      kept = gt < 0 ? html.length : gt + 1;
    }
  }
  return out + html.slice(kept);
}
