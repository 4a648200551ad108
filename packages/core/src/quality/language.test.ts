import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extractDocument } from '../extract';
import { decodeHtml, iterateWarcFile } from '../warc';
import { countLetters, evidenceConfidence, guessLanguage, identifyLanguage, languageSample, LANGUAGE_ENGINES } from './language';

const CORPUS = resolve(__dirname, '../../../../../shared/corpus');

describe('languageSample', () => {
  it('gives a short text whole', () => {
    expect(languageSample('Menu\nHome\nA short text.', 1000)).toBe('Menu\nHome\nA short text.');
  });

  it('keeps only the prose lines (≥ 40 characters) when they add up to 200 characters', () => {
    const prose = 'This line is long enough to count as prose in the sample.';
    const text = ['Home', 'News', 'Sign in', prose, 'Share', prose, prose, prose].join('\n');
    expect(languageSample(text, 1000)).toBe([prose, prose, prose, prose].join('\n'));
    // Not enough prose: the whole text.
    const thin = ['Home', 'News', prose].join('\n');
    expect(languageSample(thin, 1000)).toBe(thin);
  });

  it('takes three windows spread over a long text, cut at word boundaries', () => {
    const words = Array.from({ length: 600 }, (_, i) => `w${i}`);
    const text = words.join(' ');
    const s = languageSample(text, 300);
    const parts = s.split('\n');
    expect(parts).toHaveLength(3);
    expect(parts[0]!.startsWith('w0 w1 ')).toBe(true);
    expect(parts[2]!.endsWith('w599')).toBe(true);
    expect(parts[1]).toMatch(/\bw3[0-2]\d\b/); // from the middle
    for (const p of parts) {
      expect(p.length).toBeLessThanOrEqual(100);
      // whole words only
      for (const w of p.split(' ')) expect(words).toContain(w);
    }
    expect(languageSample(text, 300)).toBe(s);
  });
});

describe('identifyLanguage', () => {
  it('returns null below 20 letters, and for text without letters', () => {
    expect(identifyLanguage('Hello world, how are you?')).toBeNull(); // 19 letters
    expect(identifyLanguage('12345 678 90 — 2024-11-20 10:00 +++ ### 42')).toBeNull();
    expect(identifyLanguage('')).toBeNull();
    expect(identifyLanguage('Hello world, how are you?', { minLetters: 5 })?.language).toBe('eng');
  });

  it.each(LANGUAGE_ENGINES)('%s: an ISO 639-3 code and a confidence in [0, 1], deterministically', (engine) => {
    const text = 'Die Bundesregierung hat am Mittwoch neue Regeln für den Ausbau der Windenergie beschlossen.';
    const a = identifyLanguage(text, { engine });
    expect(a?.language).toBe('deu');
    expect(a!.confidence).toBeGreaterThan(0.9);
    expect(a!.confidence).toBeLessThanOrEqual(1);
    expect(identifyLanguage(text, { engine })).toEqual(a);
  });

  it('folds Chinese into zho, as CC writes it', () => {
    expect(identifyLanguage('我们在打一场无声的战役，每个在家里不出去的人都是英雄。武汉三镇尚有九百多万人口。')?.language).toBe('zho');
    expect(guessLanguage('我们在打一场无声的战役，每个在家里不出去的人都是英雄。', 'franc-min')?.language).toBe('zho');
  });

  it('is less confident on fewer words and on a near tie', () => {
    const long = identifyLanguage('The committee will publish its final report on the new railway line before the end of the year.')!;
    const short = identifyLanguage('The report on the railway line.')!;
    expect(short.language).toBe('eng');
    expect(short.confidence).toBeLessThan(long.confidence);
  });

  it('evidenceConfidence rises with the evidence, from a coin toss to at most 0.996', () => {
    for (const engine of LANGUAGE_ENGINES) {
      let prev = -1;
      for (let e = 0; e <= 100; e += 0.25) {
        const c = evidenceConfidence(engine, e);
        expect(c).toBeGreaterThanOrEqual(prev);
        expect(c).toBeGreaterThan(0);
        expect(c).toBeLessThanOrEqual(0.996);
        prev = c;
      }
      expect(evidenceConfidence(engine, 0)).toBeLessThan(0.5);
      expect(evidenceConfidence(engine, 100)).toBeGreaterThan(0.99);
    }
    expect(countLetters('ab1 ç-d 中 𝒳 😀')).toBe(6);
  });
});

/** Extracted text of a trafilatura-eval page (by file name) or a scrapinghub page (by id). */
function pageText(file: string): string {
  const path = file.endsWith('.html.gz')
    ? join(CORPUS, 'adbar-trafilatura-eval/eval', file)
    : join(CORPUS, 'scrapinghub-article-extraction-benchmark/html', `${file}.html.gz`);
  return extractDocument(decodeHtml(gunzipSync(readFileSync(path))).text, { url: 'https://example.com/' }).text;
}

describe('identifyLanguage on real pages of the corpus', () => {
  it.each([
    // a page opening with a language menu (Deutsch, English, Česky, ...) before its German text
    ['austria.info.radfahren.html.gz', 'deu'],
    // a stock ticker before the German article
    ['exxpress.at-zaehne.html.gz', 'deu'],
    ['yle.fi.3-11212601.html.gz', 'fin'],
    ['tine.no.fotballskole.html.gz', 'nor'],
    ['banyuetan.org.1000200033136171577956287380194268_1.html.gz', 'zho'],
    ['archive.org-travaillent.html.gz', 'fra'],
    ['cubadebate.cu-sesiona.html.gz', 'spa'],
    ['Jest zgoda PE na umowę handlową między UE a Londynem.html.gz', 'pol'],
    // `<html lang="en">` on a German page: the text decides
    ['springer.com-produkte.html.gz', 'deu'],
    ['0ec95c7261d122f304728e90c983450ef1ce1e0b423546835c397d50aaf0d0f2', 'kor'],
    ['85439e26c41c75901820d01a13e8cea7836abb58635ea3986f71a163ab0311d3', 'jpn'],
    ['c82b3d1d540bbbd6081bdfb78b4c068c583aa766bcaaefe7ad16d24e5413a829', 'rus'],
    ['23aaecd14171f96cfd201a8a46666097e286ad71f74f29347a78c5ecba50da1e', 'por'],
    ['20b2b64916b00b25203c9f1bf14248922f4d522f18328e9f876cce116df0083e', 'ita'],
    ['0d46122928b6f468cc4bbc694051d0dbae5702bc75a16dab82a99b58daf150a0', 'eng'],
  ])('%s → %s', (file, expected) => {
    const r = identifyLanguage(pageText(file));
    expect(r?.language).toBe(expected);
    // A whole page of text: close relatives (rus/ukr/bul, nor/dan) included, the evidence is plenty.
    expect(r!.confidence).toBeGreaterThanOrEqual(0.95);
  });

  it("agrees with Common Crawl's CLD2 on 15 of the 16 CC-MAIN-2020-34 records of the resiliparse excerpt", () => {
    const bytes = readFileSync(join(CORPUS, 'chatnoir-resiliparse/warcfile.warc.gz'));
    const cld2 = new Map<string, string>();
    const texts = new Map<string, string>();
    for (const { record } of iterateWarcFile(bytes)) {
      if (record.type === 'metadata') {
        const m = /^languages-cld2: (.*)$/m.exec(Buffer.from(record.block).toString('utf8'));
        const to = record.headers.get('warc-concurrent-to')?.trim();
        if (m && to) cld2.set(to, (JSON.parse(m[1]!) as { languages: Array<{ 'code-iso-639-3': string }> }).languages[0]!['code-iso-639-3']);
      } else if (record.type === 'response' && record.http?.status === 200 && record.recordId) {
        const html = decodeHtml(record.http.payload, { contentType: record.http.headers.get('content-type') }).text;
        texts.set(record.recordId, extractDocument(html, { url: record.targetUri ?? 'https://example.com/' }).text);
      }
    }
    let agree = 0;
    let n = 0;
    for (const [id, text] of texts) {
      const label = cld2.get(id);
      if (label === undefined) continue;
      n++;
      if (identifyLanguage(text)?.language === label) agree++;
    }
    expect(n).toBe(16);
    // The one disagreement: a page whose extracted text is only "Copyright 2017-2025 ... All Rights Reserved." (CLD2,
    // reading the whole HTML, says zho; the text is English).
    expect(agree).toBe(15);
  });
});
