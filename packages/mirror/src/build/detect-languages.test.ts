import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { detectLanguages } from './detect-languages';
import { visibleTextBlocks } from './visible-text';

const REPO_ROOT = path.resolve(__dirname, '../../../..');
const CC_MIRROR_DEV = path.join(REPO_ROOT, '../shared/corpus/cc-mirror-dev');

interface Capture {
  url: string;
  languages: string | undefined;
  html: string;
}

/** Every 200 text/html capture of cc-mirror-dev with its labelled `languages`, read via the CDX offsets. */
async function htmlCaptures(): Promise<Capture[]> {
  const out: Capture[] = [];
  const files = new Map<string, Buffer>();
  for (const crawl of ['CC-MAIN-2030-40', 'CC-MAIN-2030-44']) {
    const dir = path.join(CC_MIRROR_DEV, 'cc-index/collections', crawl, 'indexes');
    for (const name of (await fsp.readdir(dir)).filter((n) => n.endsWith('.gz')).sort()) {
      const lines = gunzipSync(await fsp.readFile(path.join(dir, name))).toString('utf8').trim().split('\n');
      for (const line of lines) {
        const cdx = JSON.parse(line.slice(line.indexOf('{'))) as Record<string, string>;
        if (cdx.status !== '200' || cdx.mime !== 'text/html') continue;
        const fname = cdx.filename!;
        if (!files.has(fname)) files.set(fname, await fsp.readFile(path.join(CC_MIRROR_DEV, fname)));
        const off = Number(cdx.offset);
        const rec = gunzipSync(files.get(fname)!.subarray(off, off + Number(cdx.length)));
        const warcEnd = rec.indexOf('\r\n\r\n');
        const httpEnd = rec.indexOf('\r\n\r\n', warcEnd + 4);
        const enc = (cdx.charset ?? 'utf-8').toLowerCase();
        const html = new TextDecoder(enc === 'iso-8859-1' ? 'windows-1252' : enc).decode(rec.subarray(httpEnd + 4));
        out.push({ url: cdx.url!, languages: cdx.languages, html });
      }
    }
  }
  return out;
}

describe('visibleTextBlocks', () => {
  it('keeps the title and body text, drops scripts, styles, comments and head metadata', () => {
    const html =
      '<html><head><title>Caf&eacute; &amp; Bar</title><meta name="description" content="hidden">' +
      '<style>p{color:red}</style></head><body><!-- note --><p>First&nbsp;para</p><script>var x="<p>no</p>";</script>' +
      '<div>Second <b>bold</b> &#8211; end</div></body></html>';
    expect(visibleTextBlocks(html)).toEqual(['Café & Bar', 'First para', 'Second bold – end']);
  });
});

describe('detectLanguages', () => {
  it('returns nothing for pages with too little text', () => {
    expect(detectLanguages('<html><body><p>Hello world</p></body></html>')).toBeUndefined();
  });

  it('finds the labelled primary language of real English, German and other-language pages of cc-mirror-dev', async () => {
    // Real-page hosts only: the corpus's synthetic bulk hosts label every page `eng` whatever its language.
    const real = (await htmlCaptures()).filter((c) => c.languages !== undefined && !/(^|\.)bulk-\d/.test(new URL(c.url).hostname));
    const groups: Record<string, Capture[]> = {
      eng: real.filter((c) => c.languages!.startsWith('eng')).slice(0, 15),
      deu: real.filter((c) => c.languages!.startsWith('deu')).slice(0, 15),
      other: real.filter((c) => !/^(eng|deu)/.test(c.languages!)).slice(0, 15),
    };
    for (const [name, caps] of Object.entries(groups)) {
      expect([name, caps.length]).toEqual([name, 15]);
      const agree = caps.filter((c) => detectLanguages(c.html)?.[0] === c.languages!.split(',')[0]).length;
      expect([name, agree >= 13]).toEqual([name, true]);
    }
  });
});
