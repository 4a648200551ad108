/**
 * Runs `work(0) … work(count - 1)` with at most `concurrency` in flight, in index order of starting. After the first
 * failure no further item starts, and the call settles only once every started item has finished — so a caller's
 * cleanup (deleting a temp dir, aborting an upload) never races work still running — then rejects with that first
 * error. Resolves when every item succeeded.
 */
export async function runLanes(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (!failed && next < count) {
      const i = next++;
      try {
        await work(i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.max(0, Math.min(concurrency, count)) }, lane));
  const first = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (first) throw first.reason;
}
