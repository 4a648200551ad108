import type { BatcherEvents } from './batcher';

/** Records in one Common Crawl ZipNum block: the sample a filter is judged on. */
export const BLOCK_SAMPLE_RECORDS = 3000;

/** What {@link emptyFilterWatch} reports: the sample's size and why its records were dropped. */
export interface EmptySample {
  records: number;
  dropped: Record<string, number>;
}

/**
 * Watches the first blocks of a run until they hold `sampleRecords` CDX records; if the filter kept none of them,
 * and not only because they lie outside the targeted domains, calls `onEmpty` once. A filter that cannot match
 * (a language no record carries, a status never served) otherwise reads 0 kept at the end of a whole crawl.
 * Stops watching at the first kept record. Pure apart from the callback.
 */
export function emptyFilterWatch(onEmpty: (e: EmptySample) => void, sampleRecords: number = BLOCK_SAMPLE_RECORDS): BatcherEvents {
  let records = 0;
  let done = false;
  const dropped: Record<string, number> = {};
  return {
    onBlock: (e) => {
      if (done) return;
      if (e.kept > 0) {
        done = true;
        return;
      }
      records += e.records;
      for (const [reason, n] of Object.entries(e.dropped)) dropped[reason] = (dropped[reason] ?? 0) + n;
      if (records < sampleRecords) return;
      done = true;
      // records of other domains in a targeted block are expected drops, not a filter that cannot match
      if (Object.keys(dropped).some((r) => r !== 'not_targeted')) onEmpty({ records, dropped: { ...dropped } });
    },
  };
}
