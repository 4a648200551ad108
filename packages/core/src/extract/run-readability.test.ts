import { spawnSync } from 'node:child_process';

// Readability restores the body from its serialization (innerHTML) before another attempt. On linkedom a doctype
// parsed there corrupted the tree: Readability threw a TypeError or never returned (found by the fuzz suite).
// Each page runs in a child with a time limit: an in-thread loop cannot be interrupted, and a regression must fail
// this test, not hang the run. The first expects the text jsdom gives it; the second not (htmlparser2 reads a MathML
// `<title>` as raw text, the HTML parser does not: a CDATA section in it, made text by cdataAsHtmlParsesIt, did the
// same in the fuzz suite).
describe('runReadability on linkedom, restoring the body', () => {
  it.each([
    ['a <title> in the body holding </title> and a doctype (threw)', '<html><body><title>a &lt;/title>&lt;!DOCTYPE html></title><p>x</p>',
      'a </title><!DOCTYPE html>\nx'],
    ['a MathML <title> holding </title>, then a doctype (never returned)', '<html><body><math><title>a &lt;/title>b <!DOCTYPE html>', null],
  ])('%s', (_, page, text) => {
    const script = `const { extractDocument } = require(${JSON.stringify(require.resolve('../../dist/extract/extract-document.js'))});
      const r = extractDocument(${JSON.stringify(page)}, { url: 'https://example.com/', dom: 'linkedom' });
      process.stdout.write(JSON.stringify({ dom: r.dom, text: r.text }));`;
    const run = spawnSync(process.execPath, ['-e', script], { timeout: 30_000, encoding: 'utf8' });
    expect({ signal: run.signal, status: run.status, stderr: run.stderr }).toEqual({ signal: null, status: 0, stderr: '' });
    const r = JSON.parse(run.stdout) as { dom: string; text: string };
    expect(r.dom).toBe('linkedom');
    if (text !== null) expect(r.text).toBe(text);
  });
});
