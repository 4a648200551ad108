import { MAX_IMPORT_TIMESTAMP_MS, parseImportTimestamp } from './timestamp';

/** Expected values spelled as strict UTC ISO strings, which Date.parse reads unambiguously. */
const utc = (iso: string): number => Date.parse(iso);
const OUT_OF_RANGE = 'timestamp out of range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z)';
const NOT_A_TIMESTAMP = 'not a timestamp (expected ISO 8601, a 14-digit CDX timestamp, or epoch seconds/milliseconds)';

describe('parseImportTimestamp', () => {
  test.each([undefined, null, '', '   ', '\t\n'])('%p is missing', (v) => {
    expect(parseImportTimestamp(v)).toEqual({ missing: true });
  });

  test.each<[unknown, string]>([
    // ISO 8601 / RFC 3339
    ['2024-05-01', '2024-05-01T00:00:00.000Z'],
    ['2024-05-01T12:00:00Z', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01t12:00:00z', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01T12:00Z', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01T12:00:00', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01 12:00:00', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01 12:00:00 UTC', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01 12:00:00GMT', '2024-05-01T12:00:00.000Z'],
    ['2024-05-01T12:00:00.5Z', '2024-05-01T12:00:00.500Z'],
    ['2024-05-01T12:00:00,25Z', '2024-05-01T12:00:00.250Z'],
    ['2024-05-01T12:00:00.123456789Z', '2024-05-01T12:00:00.123Z'],
    ['2024-05-01T12:00:00.999999+02:00', '2024-05-01T10:00:00.999Z'],
    ['2024-05-01T12:00:00+0200', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T12:00:00+02', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T01:30:00-05:30', '2024-05-01T07:00:00.000Z'],
    ['2024-05-01T00:00:00+00:00', '2024-05-01T00:00:00.000Z'],
    ['  2024-02-29T23:59:59Z  ', '2024-02-29T23:59:59.000Z'],
    ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59.999Z'],
    ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
    ['1970-01-01T01:00:00+01:00', '1970-01-01T00:00:00.000Z'],
    ['1969-12-31T23:00:00-01:00', '1970-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['2000-02-29', '2000-02-29T00:00:00.000Z'],
    // CDX: exactly 14 digits, as text, number or bigint
    ['20240501120000', '2024-05-01T12:00:00.000Z'],
    [20240501120000, '2024-05-01T12:00:00.000Z'],
    [20240501120000n, '2024-05-01T12:00:00.000Z'],
    // epoch seconds (< 1e11)
    [1714564800, '2024-05-01T12:00:00.000Z'],
    ['1714564800', '2024-05-01T12:00:00.000Z'],
    [1714564800.123, '2024-05-01T12:00:00.123Z'],
    ['1714564800.1239', '2024-05-01T12:00:00.123Z'],
    [1714564800n, '2024-05-01T12:00:00.000Z'],
    [0, '1970-01-01T00:00:00.000Z'],
    ['0', '1970-01-01T00:00:00.000Z'],
    ['20240501', '1970-08-23T06:21:41.000Z'],
    ['2024', '1970-01-01T00:33:44.000Z'],
    // epoch milliseconds (1e11 ≤ n < 1e13)
    [1714564800123, '2024-05-01T12:00:00.123Z'],
    ['1714564800123', '2024-05-01T12:00:00.123Z'],
    [1714564800123.9, '2024-05-01T12:00:00.123Z'],
    [1714564800123n, '2024-05-01T12:00:00.123Z'],
    [1e11, '1973-03-03T09:46:40.000Z'],
    // epoch microseconds (≥ 1e14): Parquet/DuckDB INT64
    [1714564800123456n, '2024-05-01T12:00:00.123Z'],
    ['1714564800123456', '2024-05-01T12:00:00.123Z'],
    [1714564800123456, '2024-05-01T12:00:00.123Z'],
    [253402300799999999n, '9999-12-31T23:59:59.999Z'],
    // Date
    [new Date('2024-05-01T12:00:00.123Z'), '2024-05-01T12:00:00.123Z'],
  ])('%p → %s', (v, iso) => {
    expect(parseImportTimestamp(v)).toEqual({ ms: utc(iso) });
  });

  test.each<[unknown, string]>([
    ['2024-02-30', 'impossible date: no such day in that month'],
    ['2023-02-29', 'impossible date: no such day in that month'],
    ['1900-02-29', 'impossible date: no such day in that month'],
    ['2024-04-31T00:00:00Z', 'impossible date: no such day in that month'],
    ['2024-13-01', 'impossible date: month out of range'],
    ['2024-00-10', 'impossible date: month out of range'],
    ['2024-05-00', 'impossible date: no such day in that month'],
    ['2024-05-01T25:00:00Z', 'impossible time: hour out of range'],
    ['2024-05-01T24:00:00Z', 'impossible time: hour out of range'],
    ['2024-05-01T12:60:00Z', 'impossible time: minute out of range'],
    ['2024-05-01T12:00:61Z', 'impossible time: second out of range'],
    ['2024-05-01T12:00:00+24:00', 'impossible zone offset'],
    ['2024-05-01T12:00:00+02:60', 'impossible zone offset'],
    ['20240230120000', 'impossible date: no such day in that month'],
    [20241301000000, 'impossible date: month out of range'],
    ['1969-12-31T23:59:59.999Z', OUT_OF_RANGE],
    ['1970-01-01T00:00:00+00:01', OUT_OF_RANGE],
    ['0099-01-01', OUT_OF_RANGE],
    ['19691231235959', OUT_OF_RANGE],
    ['9999-12-31T23:59:59-00:01', OUT_OF_RANGE],
    [-1, OUT_OF_RANGE],
    ['-1', OUT_OF_RANGE],
    ['-0.5', OUT_OF_RANGE],
    [-1n, OUT_OF_RANGE],
    [MAX_IMPORT_TIMESTAMP_MS * 1000 + 1000, OUT_OF_RANGE],
    [253402300800000000n, OUT_OF_RANGE],
    ['1714564800123456789', OUT_OF_RANGE],
    ['99999999999999999999999', OUT_OF_RANGE],
    [new Date(-1), OUT_OF_RANGE],
    [NaN, 'not a finite number'],
    [Infinity, 'not a finite number'],
    [-Infinity, 'not a finite number'],
    [new Date('nope'), 'invalid Date'],
    [20240501120000.5, 'ambiguous number: 14 integer digits are read as a CDX timestamp (YYYYMMDDhhmmss), which has no fraction'],
    ['20240501120000.5', 'ambiguous number: 14 integer digits are read as a CDX timestamp (YYYYMMDDhhmmss), which has no fraction'],
    ['yesterday', NOT_A_TIMESTAMP],
    ['May 1, 2024', NOT_A_TIMESTAMP],
    ['Wed, 01 May 2024 12:00:00 GMT', NOT_A_TIMESTAMP],
    ['2024-5-1', NOT_A_TIMESTAMP],
    ['2024-05', NOT_A_TIMESTAMP],
    ['2024-05-01T12', NOT_A_TIMESTAMP],
    ['2024-05-01T12:00:00ZZ', NOT_A_TIMESTAMP],
    ['2024-05-01T12:00:00 +02:00 x', NOT_A_TIMESTAMP],
    ['1.7e9', NOT_A_TIMESTAMP],
    ['+1714564800', NOT_A_TIMESTAMP],
    ['0x65A0', NOT_A_TIMESTAMP],
    ['2024-05-01T12:00:00.Z', NOT_A_TIMESTAMP],
    [`2024-05-01T12:00:00.${'1'.repeat(100)}Z`, NOT_A_TIMESTAMP],
    [true, NOT_A_TIMESTAMP],
    [{ ts: 1 }, NOT_A_TIMESTAMP],
    [[1714564800], NOT_A_TIMESTAMP],
  ])('%p is refused: %s', (v, error) => {
    expect(parseImportTimestamp(v)).toEqual({ error });
  });

  test('fractional epoch seconds keep the millisecond the writer meant, whatever the float rounding', () => {
    for (let k = 0; k < 1000; k++) {
      const ms = 1_700_000_000_000 + k * 7_919_311 + (k % 1000);
      expect(parseImportTimestamp(ms / 1000)).toEqual({ ms });
      expect(parseImportTimestamp(String(ms / 1000))).toEqual({ ms });
    }
  });

  test('every result is an integer number of milliseconds', () => {
    for (const v of ['2024-05-01T12:00:00.0001Z', 1714564800.0001, '1714564800.9999999', 1714564800123.999, 1714564800123456.7]) {
      const r = parseImportTimestamp(v);
      expect('ms' in r && Number.isInteger(r.ms)).toBe(true);
    }
  });
});
