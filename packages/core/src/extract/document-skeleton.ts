import { isAlpha, isNameEnd, isSpace, tagEnd } from './tag-nesting';

// Start tags the HTML parser puts in the head while no body content has been seen, and that htmlparser2 (under
// linkedom) reads the same way: void, or raw text up to their end tag. `<noscript>`, `<noframes>`, `<template>` and
// `<bgsound>` are left out — htmlparser2 reads the content of the first three as markup and does not know the last
// as void — so they start the body instead, which differs from the HTML parser only when they come before any
// content (stripInert has removed every terminated `<noscript>` by then).
const HEAD_VOID = new Set(['base', 'basefont', 'link', 'meta']);
const HEAD_RAW = new Map<string, RegExp>(['title', 'style', 'script'].map((n) => [n, new RegExp(`</${n}[\\s/>]`, 'gi')]));
// The document's own start tags. In the body the HTML parser ignores `<head>` and merges the attributes of `<html>`
// and `<body>` into the elements it already has; htmlparser2 would nest a second one.
const DOCUMENT_TAG_RE = /<(html|head|body)(?=[\s/>])/gi;

/** `html` with the start tags of the document found in it removed, and the first `<html …>` of them. */
function dropDocumentStartTags(html: string): { html: string; rootTag: string | undefined } {
  let rootTag: string | undefined;
  let out = '';
  let kept = 0;
  DOCUMENT_TAG_RE.lastIndex = 0;
  for (let m = DOCUMENT_TAG_RE.exec(html); m; m = DOCUMENT_TAG_RE.exec(html)) {
    const gt = tagEnd(html, m.index + 1 + m[1]!.length);
    if (gt < 0) break; // a tag cut off by the end of the input makes nothing
    if (m[1]!.toLowerCase() === 'html') rootTag ??= html.slice(m.index, gt + 1);
    out += html.slice(kept, m.index);
    kept = gt + 1;
    DOCUMENT_TAG_RE.lastIndex = kept;
  }
  return { html: kept === 0 ? html : out + html.slice(kept), rootTag };
}

/**
 * Gives a page without an explicit `<html>` and `<body>` (or with content before them) the skeleton the HTML
 * parser would build for it, so that linkedom, which builds none of its own, parses it into the same document:
 * `<html><head>…</head><body>…` with, in the head, what comes before any content — `<title>`, `<meta>`, `<link>`,
 * `<style>`, `<script>`, `<base>`, whitespace and comments — and in the body everything from the first text or
 * other tag on. An explicit `<html …>`, `<head …>` or `<body …>` start tag is kept where the parser would put it
 * (with its attributes: `<html lang>`). One that comes after content started is dropped: the parser ignores a late
 * `<head>` and merges the attributes of a late `<html>` or `<body>` into its own; here the first late `<html …>`
 * gives the root its attributes when none came before (a page that begins with a PHP warning and then
 * `<html lang="de">`), and a late `<body>`'s are lost. A leading doctype and comments stay before `<html>`; a
 * doctype anywhere else in the head part is dropped. A head raw-text element without an end tag (`<title>` to the end of the input) leaves
 * the rest of the page in it and no body, as in the parser.
 *
 * Expects `</body>` and `</html>` end tags to be gone (dropDocumentEndTags); start tags inside raw text or
 * comments past the head are not told apart from real ones. Linear in the input. Pure.
 */
export function withDocumentSkeleton(html: string): string {
  const n = html.length;
  let rootTag: string | undefined;
  let headTag: string | undefined;
  let bodyTag: string | undefined;
  let before = ''; // doctype and comments ahead of everything else
  let head = '';
  let started = false; // an <html>, <head> or head element was seen: comments go in the head from now on
  let doctype = false;
  let i = html.charCodeAt(0) === 0xfeff ? 1 : 0;

  while (i < n) {
    const c = html.charCodeAt(i);
    if (isSpace(c)) {
      let j = i + 1;
      while (j < n && isSpace(html.charCodeAt(j))) j++;
      if (started) head += html.slice(i, j); // whitespace ahead of the head is dropped by the parser
      i = j;
      continue;
    }
    if (c !== 60) break; // text: the body starts
    const next = html.charCodeAt(i + 1);
    if (next === 33 || next === 63 || (next === 47 && !isAlpha(html.charCodeAt(i + 2)))) {
      // comment, doctype, bogus comment (`<?…>`, `</1…>`)
      const isComment = html.startsWith('<!--', i);
      const close = isComment ? html.indexOf('-->', i + 4) : html.indexOf('>', i + 2);
      if (close < 0) break; // runs to the end of the input: the body starts, and holds it
      const end = close + (isComment ? 3 : 1);
      const token = html.slice(i, end);
      i = end;
      if (next === 47) continue; // `</>`, `</1…>`: nothing linkedom should see
      if (/^<!doctype/i.test(token)) {
        if (!started && !doctype) before += token;
        doctype = true;
      } else if (started) head += token;
      else before += token;
      continue;
    }
    const isEnd = next === 47;
    const nameStart = isEnd ? i + 2 : i + 1;
    if (!isAlpha(html.charCodeAt(nameStart))) break; // a '<' that is text
    let nameEnd = nameStart + 1;
    while (nameEnd < n && !isNameEnd(html.charCodeAt(nameEnd))) nameEnd++;
    const gt = tagEnd(html, nameEnd);
    if (gt < 0) break; // a tag cut off by the end of the input: the body holds it (and both parsers drop it)
    const name = html.slice(nameStart, nameEnd).toLowerCase();
    if (isEnd) {
      if (name === 'br') break; // `</br>` is read as `<br>`: content
      i = gt + 1; // other end tags ahead of the body are ignored (`</head>` changes nothing: head elements after it go to the head too)
      continue;
    }
    const tag = html.slice(i, gt + 1);
    if (name === 'body') {
      bodyTag = tag;
      i = gt + 1;
      break;
    }
    if (name === 'html' || name === 'head') {
      if (name === 'html') rootTag ??= tag;
      else headTag ??= tag;
      started = true;
      i = gt + 1;
      continue;
    }
    if (HEAD_VOID.has(name)) {
      head += tag;
      started = true;
      i = gt + 1;
      continue;
    }
    const rawEnd = HEAD_RAW.get(name);
    if (!rawEnd) break; // any other start tag: the body starts
    rawEnd.lastIndex = gt + 1;
    const m = rawEnd.exec(html);
    const endGt = m ? tagEnd(html, m.index + 2 + name.length) : -1;
    if (endGt < 0) {
      // no end tag: the rest of the input is this element's text
      return `${before}${rootTag ?? '<html>'}${headTag ?? '<head>'}${head}${html.slice(i)}`;
    }
    head += html.slice(i, endGt + 1);
    started = true;
    i = endGt + 1;
  }

  const body = dropDocumentStartTags(html.slice(i));
  return `${before}${rootTag ?? body.rootTag ?? '<html>'}${headTag ?? '<head>'}${head}</head>${bodyTag ?? '<body>'}${body.html}`;
}
