/** What a character is to the quality signals; `Other` is punctuation, symbols, anything else. */
export const CharClass = { Space: 0, Letter: 1, Digit: 2, Other: 3 } as const;
export type CharClass = (typeof CharClass)[keyof typeof CharClass];

const ASCII = new Uint8Array(128).fill(CharClass.Other);
for (let c = 0x30; c <= 0x39; c++) ASCII[c] = CharClass.Digit;
for (let c = 0x41; c <= 0x5a; c++) ASCII[c] = CharClass.Letter;
for (let c = 0x61; c <= 0x7a; c++) ASCII[c] = CharClass.Letter;
for (const c of [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20]) ASCII[c] = CharClass.Space;

const IS_SPACE = /^\s$/u;
const IS_LETTER = /^[\p{L}\p{M}]$/u;
const IS_DIGIT = /^\p{N}$/u;

/** Classes of the non-ASCII code points met so far (a page uses few distinct ones); emptied past 20,000 entries. */
const memo = new Map<number, CharClass>();

/** The class of code point `code`: whitespace (`\s`), letter or combining mark, digit (`\p{N}`), or other. Pure. */
export function charClass(code: number): CharClass {
  if (code < 128) return ASCII[code] as CharClass;
  let c = memo.get(code);
  if (c === undefined) {
    const ch = String.fromCodePoint(code);
    c = IS_SPACE.test(ch) ? CharClass.Space : IS_LETTER.test(ch) ? CharClass.Letter : IS_DIGIT.test(ch) ? CharClass.Digit : CharClass.Other;
    if (memo.size >= 20_000) memo.clear();
    memo.set(code, c);
  }
  return c;
}

/**
 * Terminal punctuation of a line: FineWeb's and C4's set (`. ! ? " '`) and the same marks in other scripts and
 * typography (`。！？．` CJK, `” ’ »` closing quotes, `؟ ۔` Arabic/Urdu, `। ॥` Devanagari, `։` Armenian, `።` Ethiopic,
 * `။` Myanmar), so text in those scripts is not taken for unpunctuated. `…` is not one (as in FineWeb).
 */
const TERMINAL = new Set([
  0x2e, 0x21, 0x3f, 0x22, 0x27, 0x3002, 0xff01, 0xff1f, 0xff0e, 0x201d, 0x2019, 0xbb, 0x61f, 0x6d4, 0x964, 0x965, 0x589,
  0x1362, 0x104b,
]);

/** True when code unit `code` ends a line as terminal punctuation; see {@link TERMINAL}. Pure. */
export function isTerminalPunctuation(code: number): boolean {
  return TERMINAL.has(code);
}

/** Bullets a line may start with (Gopher names `•`; datatrove adds `-`): `• ● ▪ ◦ ‣ ⁃ · * -`. */
const BULLETS = new Set([0x2022, 0x25cf, 0x25aa, 0x25e6, 0x2023, 0x2043, 0xb7, 0x2a, 0x2d]);

/** True when code unit `code` is a bullet; see {@link BULLETS}. Pure. */
export function isBullet(code: number): boolean {
  return BULLETS.has(code);
}
