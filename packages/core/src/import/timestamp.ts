/** What {@link parseImportTimestamp} makes of a value: epoch milliseconds, nothing there, or why it is refused. */
export type ImportTimestamp = { ms: number } | { missing: true } | { error: string };

/** 9999-12-31T23:59:59.999Z, the last instant an import takes (the first is the epoch). */
export const MAX_IMPORT_TIMESTAMP_MS = 253_402_300_799_999;

// Messages are a small closed set (safe to count by); the caller shows the value next to them.
const OUT_OF_RANGE = 'timestamp out of range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z)';
const NOT_A_TIMESTAMP = 'not a timestamp (expected ISO 8601, a 14-digit CDX timestamp, or epoch seconds/milliseconds)';
const AMBIGUOUS = 'ambiguous number: 14 integer digits are read as a CDX timestamp (YYYYMMDDhhmmss), which has no fraction';

const MISSING: { missing: true } = Object.freeze({ missing: true });

// Epoch magnitudes: below 1e11 seconds (up to year 5138), then milliseconds (1973-03-03 up to 2286-11-20),
// 14 integer digits a CDX timestamp, from 1e14 microseconds (1973-03-03 onwards).
const SECONDS_BELOW = 1e11;
const CDX_FROM = 1e13;
const MICROS_FROM = 1e14;

// YYYY-MM-DD, then optionally T/space hh:mm[:ss[.fraction]] and a zone (Z, UTC, GMT, ±hh[[:]mm]; none = UTC).
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?: ?([Zz]|UTC|GMT)|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;
const CDX14 = /^\d{14}$/;
const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  if (month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) return 29;
  return DAYS_IN_MONTH[month - 1]!;
}

function inRange(ms: number): ImportTimestamp {
  return ms >= 0 && ms <= MAX_IMPORT_TIMESTAMP_MS ? { ms } : { error: OUT_OF_RANGE };
}

/** First three digits of a fraction as milliseconds (`"5"` → 500, `"123456"` → 123): sub-milliseconds are cut. */
function fractionMs(f: string | undefined): number {
  if (f === undefined) return 0;
  return Number((f + '00').slice(0, 3));
}

/**
 * Epoch ms of a calendar date and time in UTC, after checking every field; `offsetMin` is the zone's offset east.
 * Leap second 60 is taken as the minute's last millisecond, so a capture stays in its minute.
 */
function civil(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number, offsetMin: number): ImportTimestamp {
  if (mo < 1 || mo > 12) return { error: 'impossible date: month out of range' };
  if (d < 1 || d > daysIn(y, mo)) return { error: 'impossible date: no such day in that month' };
  if (h > 23) return { error: 'impossible time: hour out of range' };
  if (mi > 59) return { error: 'impossible time: minute out of range' };
  if (s > 60) return { error: 'impossible time: second out of range' };
  if (y < 1969) return { error: OUT_OF_RANGE }; // also keeps Date.UTC off its two-digit-year rule
  const t = s === 60 ? Date.UTC(y, mo - 1, d, h, mi, 59, 999) : Date.UTC(y, mo - 1, d, h, mi, s, ms);
  return inRange(t - offsetMin * 60_000);
}

function parseIso(m: RegExpExecArray): ImportTimestamp {
  const [, y, mo, d, h, mi, s, frac, , sign, oh, om] = m;
  let offset = 0;
  if (sign !== undefined) {
    const hours = Number(oh);
    const minutes = om === undefined ? 0 : Number(om);
    if (hours > 23 || minutes > 59) return { error: 'impossible zone offset' };
    offset = (sign === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  return civil(Number(y), Number(mo), Number(d), Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), fractionMs(frac), offset);
}

/** A CDX timestamp, `YYYYMMDDhhmmss` in UTC (14 digits, already checked). */
function parseCdx(s: string): ImportTimestamp {
  const n = (from: number, to: number): number => Number(s.slice(from, to));
  return civil(n(0, 4), n(4, 6), n(6, 8), n(8, 10), n(10, 12), n(12, 14), 0, 0);
}

/** An epoch value given as a non-negative bigint, by magnitude (see {@link parseImportTimestamp}). */
function fromBigint(v: bigint): ImportTimestamp {
  if (v < 0n) return { error: OUT_OF_RANGE };
  if (v < BigInt(SECONDS_BELOW)) return inRange(Number(v) * 1000);
  if (v < BigInt(CDX_FROM)) return inRange(Number(v));
  if (v < BigInt(MICROS_FROM)) return parseCdx(v.toString());
  const ms = v / 1000n;
  return ms > BigInt(MAX_IMPORT_TIMESTAMP_MS) ? { error: OUT_OF_RANGE } : { ms: Number(ms) };
}

function fromNumber(v: number): ImportTimestamp {
  if (!Number.isFinite(v)) return { error: 'not a finite number' };
  if (v < 0) return { error: OUT_OF_RANGE };
  // A double such as 1714564800.123 is really …800.12299990654: the 1 µs nudge keeps the millisecond the
  // writer meant, far above a double's error at these magnitudes (≈0.1 µs) and far below a millisecond.
  if (v < SECONDS_BELOW) return inRange(Math.floor(v * 1000 + 1e-3));
  if (v < CDX_FROM) return inRange(Math.floor(v));
  if (v < MICROS_FROM) return Number.isInteger(v) ? parseCdx(String(v)) : { error: AMBIGUOUS };
  return inRange(Math.floor(v / 1000));
}

/** Digits with an optional sign and fraction, read exactly (no float rounding). */
function fromDecimalText(m: RegExpExecArray): ImportTimestamp {
  const [, sign, digits, frac] = m as unknown as [string, string, string, string | undefined];
  const int = digits.replace(/^0+(?=\d)/, '');
  if (sign === '-' && (int !== '0' || (frac !== undefined && /[1-9]/.test(frac)))) return { error: OUT_OF_RANGE };
  if (int.length > 18) return { error: OUT_OF_RANGE };
  const v = BigInt(int);
  if (v < BigInt(SECONDS_BELOW)) return inRange(Number(v) * 1000 + fractionMs(frac));
  if (frac !== undefined && v >= BigInt(CDX_FROM) && v < BigInt(MICROS_FROM)) return { error: AMBIGUOUS };
  return fromBigint(v);
}

function fromString(raw: string): ImportTimestamp {
  const s = raw.trim();
  if (s.length === 0) return MISSING;
  if (s.length > 64) return { error: NOT_A_TIMESTAMP };
  if (CDX14.test(s)) return parseCdx(s);
  const dec = DECIMAL.exec(s);
  if (dec !== null) return fromDecimalText(dec);
  const iso = ISO.exec(s);
  if (iso !== null) return parseIso(iso);
  return { error: NOT_A_TIMESTAMP };
}

/**
 * Reads the capture time of an imported row, whatever the source file made of it. Pure; never throws.
 *
 * - `undefined`, `null`, `''` or whitespace → `{ missing: true }`.
 * - ISO 8601 / RFC 3339 text: `2024-05-01`, `2024-05-01T12:00`, `2024-05-01T12:00:00.123456Z`, `T` or a space,
 *   zones `Z`, `UTC`/`GMT` (as BigQuery and SQL exports write), `+02:00`, `+0200`, `+02`; no zone means UTC. Every field
 *   is checked (no 2024-02-30, no 25:00); leap second `:60` becomes `:59.999`. Other free text (`yesterday`, RFC 2822
 *   dates) is refused: `Date.parse` accepts too much and reads it in the local zone.
 * - Integers, as digit strings, numbers or bigints, by magnitude — the one rule for all three:
 *   exactly 14 digits (1e13 ≤ n < 1e14) → CDX `YYYYMMDDhhmmss` (UTC), since no other reading of such a number lands
 *   in a plausible year; n < 1e11 → epoch seconds (fractions allowed, cut to the millisecond); 1e11 ≤ n < 1e13 → epoch
 *   milliseconds; n ≥ 1e14 → epoch microseconds (Parquet/DuckDB INT64 timestamps; nanoseconds come out of range).
 *   So `20240501` (8 digits) is epoch seconds in 1970, not a date, and `2024` is 2,024 seconds after the epoch.
 * - A `Date` → its time (a Parquet TIMESTAMP read by hyparquet arrives as one).
 *
 * @returns epoch milliseconds (an integer, sub-milliseconds cut) from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z
 *   ({@link MAX_IMPORT_TIMESTAMP_MS}); outside that, or not a timestamp at all, `{ error }` with a fixed message
 *   (the value itself is never in it).
 */
export function parseImportTimestamp(v: unknown): ImportTimestamp {
  if (v === undefined || v === null) return MISSING;
  if (typeof v === 'string') return fromString(v);
  if (typeof v === 'number') return fromNumber(v);
  if (typeof v === 'bigint') return fromBigint(v);
  if (v instanceof Date) {
    const t = v.getTime();
    return Number.isNaN(t) ? { error: 'invalid Date' } : inRange(t);
  }
  return { error: NOT_A_TIMESTAMP };
}
