/** Where {@link decodeHtml} took the charset from. */
export type CharsetSource = 'bom' | 'header' | 'meta' | 'fallback';

/** A decoded HTML payload. */
export interface DecodedHtml {
  text: string;
  /** Canonical WHATWG encoding name used (e.g. `utf-8`, `windows-1252`, `shift_jis`). */
  charset: string;
  source: CharsetSource;
}

/** How many leading bytes are searched for a `<meta>` charset declaration. */
export const META_PRESCAN_BYTES = 4096;

/**
 * Resolves an encoding label the WHATWG way (`latin1`, `iso-8859-1`, `ascii` → `windows-1252`, ...) with
 * Node's ICU TextDecoder. Returns undefined for labels it does not know or cannot decode (`replacement`
 * family such as `hz-gb-2312`, `x-user-defined`). Pure.
 */
export function resolveCharset(label: string | undefined): string | undefined {
  if (!label) return undefined;
  const l = label.trim().replace(/^["']|["']$/g, '').trim();
  if (!l || l.length > 40) return undefined;
  try {
    return new TextDecoder(l).encoding;
  } catch {
    return undefined;
  }
}

/** The `charset` parameter of a Content-Type value, unresolved. Pure. */
export function charsetFromContentType(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const m = /;\s*charset\s*=\s*("([^"]*)"|'([^']*)'|[^;\s]+)/i.exec(contentType);
  if (!m) return undefined;
  return m[2] ?? m[3] ?? m[1];
}

function bomCharset(b: Uint8Array): string | undefined {
  if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return 'utf-8';
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) return 'utf-16be';
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) return 'utf-16le';
  return undefined;
}

const META = /<meta\b([^>]*)>/gi;

// WHATWG index-windows-1252 for 0x80..0x9F (the rest of the table is latin1). Node 20.18.3+ decodes
// `windows-1252` (and its labels latin1, iso-8859-1, ascii) as ISO-8859-1, turning these bytes into C1
// controls (nodejs/node#60888), so this one encoding is decoded here.
const CP1252_C1 = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
].map((c) => String.fromCharCode(c));

/**
 * Decodes bytes in a canonical WHATWG encoding (as returned by {@link resolveCharset}); windows-1252 is
 * decoded per the WHATWG table whatever Node's TextDecoder does. Invalid sequences become U+FFFD. Pure.
 */
export function decodeBytes(bytes: Uint8Array, encoding: string): string {
  if (encoding !== 'windows-1252') return new TextDecoder(encoding).decode(bytes);
  const s = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return s.replace(/[\x80-\x9f]/g, (c) => CP1252_C1[c.charCodeAt(0) - 0x80]!);
}

/**
 * The charset a `<meta charset>` or `<meta http-equiv="content-type" content="...; charset=...">` in the
 * first {@link META_PRESCAN_BYTES} bytes declares, resolved; comments are skipped. As the HTML standard
 * says, a declared UTF-16 means UTF-8 (the bytes were ASCII-compatible to be read at all) and
 * x-user-defined means windows-1252. Pure.
 */
export function sniffMetaCharset(payload: Uint8Array): string | undefined {
  const head = Buffer.from(payload.buffer, payload.byteOffset, Math.min(payload.length, META_PRESCAN_BYTES))
    .toString('latin1')
    .replace(/<!--[\s\S]*?(?:-->|$)/g, '');
  META.lastIndex = 0;
  for (let m = META.exec(head); m; m = META.exec(head)) {
    const attrs = m[1] ?? '';
    let label: string | undefined;
    const direct = /\bcharset\s*=\s*["']?\s*([^"'\s;\/>]+)/i.exec(attrs);
    if (/\bhttp-equiv\s*=\s*["']?\s*content-type/i.test(attrs)) {
      const content = /\bcontent\s*=\s*("([^"]*)"|'([^']*)'|[^\s>]+)/i.exec(attrs);
      label = charsetFromContentType(content ? (content[2] ?? content[3] ?? content[1]) : undefined);
    } else if (direct) {
      label = direct[1];
    }
    if (label === undefined) continue;
    const l = label.trim().toLowerCase();
    if (l.startsWith('utf-16') || l === 'unicode' || l === 'ucs-2') return 'utf-8';
    if (l === 'x-user-defined') return 'windows-1252';
    const enc = resolveCharset(label);
    if (enc) return enc;
  }
  return undefined;
}

/**
 * Decodes an HTML payload to text choosing the charset in this order: byte-order mark, the HTTP
 * `Content-Type` charset (`opts.contentType`), a `<meta>` declaration in the first 4 KB, then a fallback:
 * UTF-8 when the bytes are valid UTF-8, else windows-1252. Unknown or unsupported labels are skipped.
 * Never throws; pure.
 */
export function decodeHtml(payload: Uint8Array, opts: { contentType?: string } = {}): DecodedHtml {
  const bom = bomCharset(payload);
  if (bom) return { text: new TextDecoder(bom).decode(payload), charset: bom, source: 'bom' };
  const fromHeader = resolveCharset(charsetFromContentType(opts.contentType));
  if (fromHeader) return { text: decodeBytes(payload, fromHeader), charset: fromHeader, source: 'header' };
  const fromMeta = sniffMetaCharset(payload);
  if (fromMeta) return { text: decodeBytes(payload, fromMeta), charset: fromMeta, source: 'meta' };
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(payload), charset: 'utf-8', source: 'fallback' };
  } catch {
    return { text: decodeBytes(payload, 'windows-1252'), charset: 'windows-1252', source: 'fallback' };
  }
}
