import { MARK_CLOSE, MARK_CUT, MARK_OPEN } from './shard-schema';

/** A piece of a snippet: `hit` pieces are the words that matched the query. */
export interface SnippetPart {
  text: string;
  hit: boolean;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text with the five HTML-special characters escaped. Pure. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * FTS5 snippet() output (hits between {@link MARK_OPEN} and {@link MARK_CLOSE}, cuts as {@link MARK_CUT}) as parts;
 * a cut becomes '…'. Pure.
 */
export function snippetParts(raw: string | null): SnippetPart[] {
  if (!raw) return [];
  const parts: SnippetPart[] = [];
  const push = (text: string, hit: boolean): void => {
    if (text === '') return;
    const last = parts[parts.length - 1];
    if (last && last.hit === hit) last.text += text;
    else parts.push({ text, hit });
  };
  for (const seg of raw.replaceAll(MARK_CUT, '…').split(MARK_OPEN)) {
    const close = seg.indexOf(MARK_CLOSE);
    if (close < 0) push(seg, false);
    else {
      push(seg.slice(0, close), true);
      push(seg.slice(close + 1).replaceAll(MARK_CLOSE, ''), false);
    }
  }
  return parts;
}

/** Parts as HTML: hits in `<mark>…</mark>`, every character of the text escaped. Pure. */
export function snippetHtml(parts: readonly SnippetPart[]): string {
  return parts.map((p) => (p.hit ? `<mark>${escapeHtml(p.text)}</mark>` : escapeHtml(p.text))).join('');
}
