import { parseDom } from './parse-dom';

jest.mock('linkedom', () => {
  const actual = jest.requireActual('linkedom');
  return { ...actual, parseHTML: jest.fn(actual.parseHTML) };
});
const linkedom = require('linkedom') as { parseHTML: jest.Mock };

describe('parseDom', () => {
  it('parses a page without <html>/<body> with linkedom, once', () => {
    linkedom.parseHTML.mockClear();
    const parsed = parseDom(`<title>T</title>${'<select><option>x'.repeat(1_200)}`, 'linkedom');
    expect(parsed.dom).toBe('linkedom');
    expect(parsed.document.title).toBe('T');
    expect(parsed.document.body?.firstElementChild?.localName).toBe('select');
    expect(linkedom.parseHTML).toHaveBeenCalledTimes(1);
  });

  it('falls back to jsdom only when linkedom throws, and not on a stack overflow', () => {
    linkedom.parseHTML.mockImplementationOnce(() => {
      throw new TypeError('a linkedom bug');
    });
    const parsed = parseDom('<html><body><p>x</p></body></html>', 'linkedom');
    try {
      expect(parsed.dom).toBe('jsdom');
      expect(parsed.document.body?.textContent).toBe('x');
    } finally {
      parsed.dispose();
    }
    linkedom.parseHTML.mockImplementationOnce(() => {
      throw new RangeError('Maximum call stack size exceeded');
    });
    expect(() => parseDom('<html><body><p>x</p></body></html>', 'linkedom')).toThrow(RangeError);
  });
});
