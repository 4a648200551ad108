import { toCcLanguageCode } from './language-codes';
import { CharClass, charClass } from './text-chars';

/**
 * Language identifiers {@link identifyLanguage} can use. `eld` (Efficient Language Detector, 60 languages, the
 * extra-small n-gram database) is the default: with fastText the most accurate of the libraries compared on the corpus,
 * and 4× faster than franc-min as used here (docs/extraction.md). `franc-min` (trigrams, 82 languages) knows some languages eld does not
 * (Indonesian, Swahili, Hausa, Somali, Uzbek, Kazakh, ...) and none of Danish, Finnish, Norwegian, Slovak, Hebrew.
 */
export type LanguageEngine = 'eld' | 'franc-min';

export const LANGUAGE_ENGINES: readonly LanguageEngine[] = ['eld', 'franc-min'];

/** The language of a text: an ISO 639-3 code as Common Crawl's CDX `languages` writes it, and a confidence in [0, 1]. */
export interface IdentifiedLanguage {
  language: string;
  confidence: number;
}

/** Options of {@link identifyLanguage}. */
export interface IdentifyLanguageOptions {
  /** Default `eld`. */
  engine?: LanguageEngine;
  /** Fewer letters than this in the sample → null. Default {@link DEFAULT_MIN_LETTERS}. */
  minLetters?: number;
  /** Characters of the text given to the engine, see {@link languageSample}. Default {@link DEFAULT_SAMPLE_CHARS}. */
  sampleChars?: number;
}

/** Below 20 letters (about four words) no language is claimed: eld is right on 86% of 15-character snippets, 96% of 30. */
export const DEFAULT_MIN_LETTERS = 20;
/** eld reads at most 1,000 characters of what it is given; franc-min 2,048 (and costs ~linear time in them). */
export const DEFAULT_SAMPLE_CHARS = 1000;

/** A line this long is taken for prose; shorter ones are mostly menus, buttons, bylines, dates. */
const PROSE_LINE_CHARS = 40;
/** Prose shorter than this in total is not enough: the whole text is sampled instead. */
const MIN_PROSE_CHARS = 200;
/** The sample is this many windows, spread evenly over the prose, so a page's head does not decide alone. */
const WINDOWS = 3;

/**
 * The part of `text` a language identifier is given: its prose lines (≥ 40 characters; the whole text when they add up
 * to less than 200), and when those are longer than `maxChars`, three windows of `maxChars / 3` spread evenly over them
 * (start, middle, end), each cut back to a word boundary. Extracted text often opens with navigation or a PHP warning,
 * and both libraries read only the head of what they get. Pure.
 */
export function languageSample(text: string, maxChars: number = DEFAULT_SAMPLE_CHARS): string {
  let prose = '';
  for (const line of text.split('\n')) {
    if (line.length >= PROSE_LINE_CHARS) prose = prose === '' ? line : `${prose}\n${line}`;
  }
  const body = prose.length >= MIN_PROSE_CHARS ? prose : text;
  if (body.length <= maxChars) return body;
  const width = Math.floor(maxChars / WINDOWS);
  const parts: string[] = [];
  for (let i = 0; i < WINDOWS; i++) {
    let start = Math.floor(((body.length - width) * i) / (WINDOWS - 1));
    let end = start + width;
    if (i > 0) {
      const space = body.indexOf(' ', start);
      if (space !== -1 && space < end) start = space + 1;
    }
    if (i < WINDOWS - 1) {
      const space = body.lastIndexOf(' ', end);
      if (space > start) end = space;
    }
    parts.push(body.slice(start, end));
  }
  return parts.join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Engines. Each is loaded on first use: eld's database costs ~140 ms of CPU and ~29 MB of heap, which a process that
// never identifies a language (the API, most of the CLI) should not pay.

/** What {@link identifyLanguage} reads from an engine: its best language (any ISO 639 form) and the relative margin. */
interface RawGuess {
  code: string;
  margin: number;
}

interface EldResult {
  language: string;
  getScores(): Record<string, number>;
}
interface EldModule {
  eld: { detect(text: string): EldResult };
}
type FrancAll = (value: string, options?: { minLength?: number }) => Array<[string, number]>;

let eldDetector: EldModule['eld'] | undefined;
let francAll: FrancAll | undefined;

/**
 * eld's `package.json` exports its entry points under the `import` condition only, which `require` does not match
 * (not even Node ≥ 20.19's `require` of an ES module), and core is CommonJS; so the entry file is required by path, in
 * the folders Node would search for the package. The path is eld 2.1's layout (the version is pinned; the tests load it).
 */
function loadEld(): EldModule['eld'] {
  if (eldDetector !== undefined) return eldDetector;
  const entry = 'eld/src/entries/static.extrasmall.js';
  for (const dir of require.resolve.paths('eld') ?? []) {
    try {
      eldDetector = (require(`${dir}/${entry}`) as EldModule).eld;
      return eldDetector;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    }
  }
  throw new Error(`language engine eld is not installed (looked for ${entry})`);
}

function eldGuess(sample: string): RawGuess | null {
  const r = loadEld().detect(sample);
  if (!r.language) return null;
  let best = 0;
  let second = 0;
  for (const [code, score] of Object.entries(r.getScores())) {
    if (code === r.language) best = Math.max(best, score);
    else if (score > second) second = score;
  }
  return best > 0 ? { code: r.language, margin: Math.max(0, (best - second) / best) } : null;
}

function francGuess(sample: string): RawGuess | null {
  francAll ??= (require('franc-min') as { francAll: FrancAll }).francAll;
  const r = francAll(sample, { minLength: 1 });
  const best = r[0];
  if (best === undefined || best[0] === 'und') return null;
  // franc scores the winner 1 and the others by their trigram distance relative to it.
  return { code: best[0], margin: Math.min(1, Math.max(0, 1 - (r[1]?.[1] ?? 0))) };
}

// ---------------------------------------------------------------------------------------------------------------
// Confidence. Neither library gives a probability: eld gives per-language scores in (0, 1) that are averages over the
// text's n-grams, franc trigram distances relative to the winner's. What both give is how far the winner is ahead of
// the runner-up, the relative margin. A margin alone mixes two things: it does not grow with the amount of text (eld
// averages, franc normalises by length), and it is small between close relatives (Russian/Ukrainian/Bulgarian,
// Norwegian/Danish) however long the text. Margin × letters — the evidence — separates right from wrong answers at least
// as well (area under the ROC curve: eld 0.887 against 0.880 for the margin; franc-min 0.940 against 0.748) and gives
// the corpus's Russian pages, all identified right at margins of 0.01–0.04, the confidence of long texts. The
// confidence is the share of right answers the engine had at that evidence on 6,986 snippets (15–1,000 characters, 998
// pages) of the corpus pages' prose against the pages' adjudicated language (bench/langid.bench.js prints the table),
// made monotone and interpolated linearly between the knots; flat beyond the first and last.

/** [evidence, share of right answers] knots, evidence ascending (bucket medians; monotone by pooling neighbours). */
const CALIBRATION: Record<LanguageEngine, ReadonlyArray<readonly [number, number]>> = {
  eld: [
    [0, 0.4],
    [0.5, 0.61],
    [1.6, 0.905],
    [2.8, 0.94],
    [5, 0.988],
    [25, 0.991],
    [60, 0.995],
  ],
  'franc-min': [
    [0.35, 0.33],
    [1.2, 0.44],
    [2.2, 0.6],
    [3.5, 0.77],
    [4.9, 0.885],
    [6.7, 0.943],
    [8.8, 0.977],
    [11.5, 0.986],
    [18, 0.991],
    [25, 0.996],
  ],
};

/** The calibrated confidence of `engine` at `evidence` (relative margin × letters of the sample). Pure. */
export function evidenceConfidence(engine: LanguageEngine, evidence: number): number {
  const knots = CALIBRATION[engine];
  let prev = knots[0]!;
  if (evidence <= prev[0]) return prev[1];
  for (let i = 1; i < knots.length; i++) {
    const k = knots[i]!;
    if (evidence <= k[0]) return prev[1] + ((k[1] - prev[1]) * (evidence - prev[0])) / (k[0] - prev[0]);
    prev = k;
  }
  return prev[1];
}

/** Letters in `s`: code points of `\p{L}`, and combining marks (`\p{M}`, as in Devanagari vowel signs). */
export function countLetters(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    let code = s.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < s.length) {
      code = s.codePointAt(i) ?? code;
      i++;
    }
    if (charClass(code) === CharClass.Letter) n++;
  }
  return n;
}

/**
 * The uncalibrated step of {@link identifyLanguage}: `engine`'s best language for `sample` exactly as given (no
 * sampling, no minimum length) as a CC ISO 639-3 code, and its relative margin `(best − runner-up) / best` in [0, 1]
 * (0: the runner-up scored as high as the winner). Null when the engine finds no language. For calibrating
 * {@link evidenceConfidence}; deterministic.
 */
export function guessLanguage(sample: string, engine: LanguageEngine = 'eld'): { language: string; margin: number } | null {
  const guess = engine === 'eld' ? eldGuess(sample) : francGuess(sample);
  const language = guess === null ? null : toCcLanguageCode(guess.code);
  return guess === null || language === null ? null : { language, margin: guess.margin };
}

/**
 * The language of `text` (extracted text, one block per line): an ISO 639-3 code as Common Crawl writes it in the CDX
 * `languages` field (`eng`, `deu`, `zho`; individual languages folded into CC's macrolanguages, see
 * {@link toCcLanguageCode}), with a confidence in [0, 1] — the share of right answers the engine had with the same
 * evidence (winning margin × letters) on the corpus (see {@link evidenceConfidence}; eld: 0.99 for a paragraph, 0.6 for
 * a near tie on a few words). The engine sees {@link languageSample} of the text. Null when the sample has fewer than
 * `minLetters` letters, or the engine finds no language (digits, symbols, a script it does not know). A language the
 * engine does not know comes out as its nearest neighbour (eld has no Indonesian: `msa`).
 *
 * Deterministic and pure (the engine's model is a JS module, loaded on the first call: ~140 ms of CPU for eld).
 * @throws Error when the engine's package is not installed
 */
export function identifyLanguage(text: string, opts: IdentifyLanguageOptions = {}): IdentifiedLanguage | null {
  const engine = opts.engine ?? 'eld';
  const sample = languageSample(text, opts.sampleChars ?? DEFAULT_SAMPLE_CHARS);
  const letters = countLetters(sample);
  if (letters < (opts.minLetters ?? DEFAULT_MIN_LETTERS)) return null;
  const guess = guessLanguage(sample, engine);
  if (guess === null) return null;
  return { language: guess.language, confidence: Math.round(evidenceConfidence(engine, guess.margin * letters) * 1000) / 1000 };
}
