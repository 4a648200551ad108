import { CcpError, type RangeReader, type RecordFilter } from '@ccpipe/core';
import { loadWarcPaths } from './bulk';
import type { Checkpoint } from './checkpoint';
import { chooseMode, estimateModes, type ModeChoice } from './mode-choice';
import type { PlannedBlock } from './plan-blocks';
import type { TargetSet } from './targets';

/**
 * The read mode of a run (`--mode`). A dataset keeps the mode it was begun in (its batch ids depend on it: switching
 * would index its records twice); asking for the other one is refused. A new dataset takes the mode asked for; under
 * `auto`, ranges for a `--domains` run or a `--max-blocks` sample (they read a few blocks: whole WARC files would move
 * far more), else whichever a sample of the CDX says moves less ({@link estimateModes}, {@link chooseMode}). Returns
 * the WARC file list when it was read for the estimate.
 */
export async function chooseReadMode(a: {
  asked: 'auto' | 'bulk' | 'ranges';
  checkpoint: Checkpoint | null;
  crawl: string;
  plan: readonly PlannedBlock[];
  filter: RecordFilter;
  targets: TargetSet | null;
  maxBlocks: number | null;
  reader: RangeReader;
  signal?: AbortSignal;
}): Promise<{ choice: ModeChoice; warcPaths?: string[] }> {
  if (a.checkpoint !== null) {
    const begun = a.checkpoint.mode ?? 'ranges';
    if (a.asked !== 'auto' && a.asked !== begun) {
      throw new CcpError(
        'CCP_ERR_CHECKPOINT_MISMATCH',
        `dataset "${a.checkpoint.dataset}" was begun in ${begun} mode: finish it in that mode (--mode ${begun} or auto), or index the crawl again under another --dataset name`,
        { retryable: false, detail: { dataset: a.checkpoint.dataset, begun, asked: a.asked } },
      );
    }
    return { choice: a.checkpoint.modeChoice ?? { mode: begun, asked: a.asked, reason: `the dataset was begun in ${begun} mode` } };
  }
  if (a.asked !== 'auto') return { choice: { mode: a.asked, asked: a.asked, reason: 'asked for (--mode)' } };
  if (a.plan.length === 0) return { choice: { mode: 'ranges', asked: 'auto', reason: 'no CDX block is planned: nothing to read' } };
  if (a.targets !== null) return { choice: { mode: 'ranges', asked: 'auto', reason: 'a --domains run reads only the blocks of its domains: a range request per record moves least' } };
  if (a.maxBlocks !== null) return { choice: { mode: 'ranges', asked: 'auto', reason: 'a --max-blocks sample keeps records from all over the crawl\'s WARC files: a range request per record moves least' } };
  const warcPaths = await loadWarcPaths(a.crawl, a.reader, a.signal);
  const estimate = await estimateModes({ crawl: a.crawl, plan: a.plan, filter: a.filter, targets: a.targets }, a.reader, warcPaths.length, a.signal);
  return { choice: chooseMode(estimate), warcPaths };
}
