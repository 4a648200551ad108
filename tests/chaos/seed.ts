/**
 * The chaos suite's seed and random source. CHAOS_SEED=<n> replays a run's schedule (which worker is killed after
 * which pause, when the broker restarts and for how long, where the batcher and the merger are killed); unset or
 * `random` draws a fresh one. The processes' own timing is not replayed: the same seed gives the same schedule, not the
 * same interleaving.
 */

export { rng, type Rng } from '../support/rng';

/** CHAOS_SEED as a number; a fresh random one when unset, empty or `random`. @throws Error on anything else. */
export function chaosSeed(env: NodeJS.ProcessEnv = process.env): number {
  const raw = (env['CHAOS_SEED'] ?? '').trim();
  if (raw === '' || raw === 'random') return Math.floor(Math.random() * 2 ** 31);
  if (!/^\d{1,10}$/.test(raw)) throw new Error(`CHAOS_SEED must be a non-negative integer or 'random', not ${raw}`);
  return Number(raw) >>> 0;
}
