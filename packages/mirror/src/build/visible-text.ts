const DROP_ELEMENTS = /<(script|style|noscript|template|svg|math|iframe|object|head)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const COMMENTS = /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<![^>]*>|<\?[^>]*>/g;
const BLOCK_TAGS =
  /<\/?(?:address|article|aside|blockquote|br|dd|div|dl|dt|fieldset|figcaption|figure|footer|form|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|table|tbody|td|tfoot|th|thead|tr|ul|option|select|button|label)\b[^>]*>/gi;
const ANY_TAG = /<\/?[a-zA-Z][^>]*>/g;
const TITLE = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i;

const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', shy: '', ndash: '–', mdash: '—',
  laquo: '«', raquo: '»', bdquo: '„', ldquo: '“', rdquo: '”', lsquo: '‘', rsquo: '’', hellip: '…',
  auml: 'ä', ouml: 'ö', uuml: 'ü', Auml: 'Ä', Ouml: 'Ö', Uuml: 'Ü', szlig: 'ß', eacute: 'é', egrave: 'è',
  agrave: 'à', aacute: 'á', iacute: 'í', oacute: 'ó', uacute: 'ú', ntilde: 'ñ', ccedil: 'ç', ecirc: 'ê',
};

/** Decodes numeric references and the common named ones; leaves unknown names as they are. */
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+[0-9]?);/gi, (whole, ref: string) => {
    if (ref[0] === '#') {
      const cp = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(cp) && cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : ' ';
    }
    return NAMED[ref] ?? whole;
  });
}

/**
 * The human-visible text blocks of an HTML document, found cheaply with regular expressions (an
 * indexer cannot afford a DOM per page): `<head>` is dropped except its `<title>`; scripts, styles,
 * comments and other non-text elements are removed; block-level tags split blocks; entities are
 * decoded and whitespace collapsed. Blocks are returned in document order, empty ones dropped.
 * Pure; never throws; quality is "good enough for language identification", not for extraction.
 */
export function visibleTextBlocks(html: string): string[] {
  const title = TITLE.exec(html)?.[1] ?? '';
  const body = html.replace(COMMENTS, ' ').replace(DROP_ELEMENTS, ' ').replace(BLOCK_TAGS, '\n').replace(ANY_TAG, ' ');
  const out: string[] = [];
  for (const raw of [title, ...body.split('\n')]) {
    const text = decodeEntities(raw.replace(ANY_TAG, ' ')).replace(/\s+/g, ' ').trim();
    if (text !== '') out.push(text);
  }
  return out;
}
