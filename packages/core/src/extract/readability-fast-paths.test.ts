import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import type { DomElement, DomNode } from './dom-types';
import { hasNonWhitespaceText, hasSingleTagInsideElement, isElementWithoutContent, isValidByline } from './readability-fast-paths';

const stock = (node: unknown): boolean =>
  (Readability.prototype as unknown as { _isElementWithoutContent(n: unknown): boolean })._isElementWithoutContent.call(Readability.prototype, node);

describe('isElementWithoutContent', () => {
  it.each([
    ['<div></div>'],
    ['<div> \n\t </div>'],
    ['<div>\u00a0</div>'], // no-break space is whitespace to trim()
    ['<div>\u200b</div>'], // zero-width space is not
    ['<div><br><hr> </div>'],
    ['<div><br><span></span></div>'],
    ['<div><p><br></p></div>'],
    ['<div><span> </span><b>\u2003</b></div>'],
    ['<div><span></span><span>x</span></div>'],
    ['<div><!-- text in a comment --></div>'],
    ['<div><p></p><p><i> <br> </i></p>y</div>'],
    ['3,000 nested <div>s around a space', `${'<div>'.repeat(3000)} ${'</div>'.repeat(3000)}`],
  ].map(([name, html]) => [name, html ?? name]))('answers as Readability 0.6.0 does on %s', (_, html) => {
    const { document } = parseHTML(`<html><body>${html}</body></html>`);
    const div = document.body.firstElementChild as unknown as DomNode;
    expect(isElementWithoutContent(div)).toBe(stock(div));
    expect(hasNonWhitespaceText(div)).toBe(((div as { textContent: string | null }).textContent ?? '').trim().length > 0);
  });

  it('is false for a text node, as Readability says', () => {
    const { document } = parseHTML('<html><body>x</body></html>');
    const text = document.body.firstChild as unknown as DomNode;
    expect(isElementWithoutContent(text)).toBe(false);
    expect(stock(text)).toBe(false);
  });
});

describe('isValidByline', () => {
  const stock = Readability.prototype as unknown as {
    _isValidByline(n: unknown, m: string): boolean;
    REGEXPS: { byline: RegExp; hasContent: RegExp };
  };

  it.each([
    ['<a rel="author">Jane Doe</a>', ''],
    ['<a rel="author"> </a>', ''],
    [`<a rel="author">${'x'.repeat(99)}</a>`, ''],
    [`<a rel="author">${'x'.repeat(100)}</a>`, ''],
    ['<span itemprop="author">Jane</span>', ''],
    ['<span itemprop="name">Jane</span>', ''],
    ['<div>By Jane</div>', 'byline '],
    ['<div>By Jane</div>', 'post-author main'],
    ['<div>By Jane</div>', 'story '],
    ['<div><p>By</p> <p>Jane</p></div>', 'p-author '],
  ])('answers as Readability 0.6.0 does on %s with class and id "%s"', (html, matchString) => {
    const { document } = parseHTML(`<html><body>${html}</body></html>`);
    const el = document.body.firstElementChild as unknown as DomElement;
    expect(isValidByline.call(stock, el, matchString)).toBe(stock._isValidByline(el, matchString));
  });
});

describe('hasSingleTagInsideElement', () => {
  const stock = Readability.prototype as unknown as {
    _hasSingleTagInsideElement(e: unknown, tag: string): boolean;
    REGEXPS: { byline: RegExp; hasContent: RegExp };
  };

  it.each([
    ['<div><p>a</p></div>', 'P'],
    ['<div> \n <p>a</p>\t</div>', 'P'],
    ['<div><p>a</p></div>', 'DIV'],
    ['<div><p>a</p><p>b</p></div>', 'P'],
    ['<div>x<p>a</p></div>', 'P'],
    ['<div><p>a</p>x </div>', 'P'],
    ['<div><!-- c --><p>a</p></div>', 'P'],
    ['<div></div>', 'P'],
    ['<div>text only</div>', 'P'],
    ['<div><section><p>a</p></section></div>', 'SECTION'],
    ['<div><p>a</p><span></span></div>', 'P'],
  ])('answers as Readability 0.6.0 does on %s asking for %s', (html, tag) => {
    const { document } = parseHTML(`<html><body>${html}</body></html>`);
    const el = document.body.firstElementChild as unknown as DomElement;
    expect(hasSingleTagInsideElement.call(stock, el, tag)).toBe(stock._hasSingleTagInsideElement.call(stock, el, tag));
  });
});
