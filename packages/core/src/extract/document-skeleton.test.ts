import { withDocumentSkeleton } from './document-skeleton';
import { parseDom } from './parse-dom';

describe('withDocumentSkeleton', () => {
  const cases: Array<[string, string, string]> = [
    ['a fragment: leading head elements in the head, the rest in the body',
      '<title>T</title><meta charset=utf-8><p>x</p>',
      '<html><head><title>T</title><meta charset=utf-8></head><body><p>x</p>'],
    ['a leading doctype and comment stay before <html>; leading whitespace goes',
      '\ufeff \n<!DOCTYPE html>\n<!-- c -->\n<link rel=a href=b><script>x("<body>")</script><style>p{}</style>\n<base href=/>text',
      '<!DOCTYPE html><!-- c --><html><head><link rel=a href=b><script>x("<body>")</script><style>p{}</style>\n<base href=/></head><body>text'],
    ['<html> without <body>: its attributes kept, the body starts at the first content',
      '<html lang="de"><head><title>T</title></head><div>d</div>',
      '<html lang="de"><head><title>T</title></head><body><div>d</div>'],
    ['<body> without <html>: its attributes kept',
      '<head><title>T</title></head><body class=x><p>b</p>',
      '<html><head><title>T</title></head><body class=x><p>b</p>'],
    ['head elements after </head> still go to the head, ignored end tags go',
      '<head></head><meta name=a></p><title>T</title></br><p>x',
      '<html><head><meta name=a><title>T</title></head><body></br><p>x'],
    ['content before <html> (a PHP warning): the document tags after it go, <html lang> gives the root its attributes',
      '<br />\n<b>Warning</b>: x<br />\n<!DOCTYPE html>\n<html lang="de-DE"><head><title>T</title></head><body><p>text</p>',
      '<html lang="de-DE"><head></head><body><br />\n<b>Warning</b>: x<br />\n<!DOCTYPE html>\n<title>T</title></head><p>text</p>'],
    ['a head element before the doctype and <html>',
      '<meta property="og:title" content="X"><!DOCTYPE html><html lang="en"><head><title>T</title></head><body><p>p</p>',
      '<html lang="en"><head><meta property="og:title" content="X"><title>T</title></head><body><p>p</p>'],
    ['a <title> without end tag holds the rest of the input',
      '<title>T <p>x',
      '<html><head><title>T <p>x'],
    ['an unterminated comment runs to the end: in the body',
      '<title>T</title><!-- x',
      '<html><head><title>T</title></head><body><!-- x'],
    ['quoted ">" in attributes of the tags it keeps',
      '<html data-x="a>b"><meta content="<body>"><p>x',
      '<html data-x="a>b"><head><meta content="<body>"></head><body><p>x'],
  ];
  it.each(cases)('%s', (_, html, expected) => {
    expect(withDocumentSkeleton(html)).toBe(expected);
  });

  // What the lever is for: linkedom on the synthesized skeleton builds the tree jsdom (the HTML parser) builds.
  it.each([
    '<title>Fragment</title><p>Only a <a href=/a>fragment</a>.</p>',
    '<!DOCTYPE html>\n<!-- c -->\n  <meta charset=utf-8><title>T</title><link rel=x href=y><p>hi</p>',
    '<html lang="de"><head><title>T</title></head><div>body</div><p>after</p>',
    '<head><title>T</title></head><body class=x><p>b</p></body></html>',
    '<br />\n<b>Warning</b>: x<br />\n<!DOCTYPE html>\n<html lang="de-DE"><head><title>Real</title></head><body><p>text</p></body></html>',
    '\t<meta property="og:title" content="X" /><!DOCTYPE html>\n<html lang="en"><head><title>T</title></head><body><p>p</p>',
    'plain text <title>late</title>',
    '<ul><li>a<li>b</ul><select><option>x<option>y</select>',
  ])('linkedom builds what jsdom builds: %j', (html) => {
    const linkedom = parseDom(html, 'linkedom');
    const jsdom = parseDom(html, 'jsdom');
    try {
      expect(linkedom.dom).toBe('linkedom');
      const serialize = (d: typeof linkedom.document) => (d.documentElement as unknown as { outerHTML: string }).outerHTML;
      expect(serialize(linkedom.document)).toBe(serialize(jsdom.document));
      expect(linkedom.document.title).toBe(jsdom.document.title);
    } finally {
      jsdom.dispose();
    }
  });
});
