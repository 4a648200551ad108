/**
 * True when the tests run under CI (`CI` set to anything but '', '0' or 'false'; `.ci/run` runs with CI=true). There,
 * a missing tool or service fails its test instead of skipping it: one rule for every test that may skip.
 */
export function inCi(): boolean {
  const v = (process.env['CI'] ?? '').trim().toLowerCase();
  return v !== '' && v !== '0' && v !== 'false';
}
