import { Writable } from 'node:stream';
import { createLogger } from '@ccpipe/adapters';
import { screen } from '../../../tests/support/terminal';
import { emptySummary } from './batcher';
import { batcherProgress } from './progress';

/** One terminal: what stdout and stderr write, in order. */
function terminal(): { out: Writable & { isTTY: true; columns: number }; err: Writable & { isTTY: true; columns: number }; writes: string[] } {
  const writes: string[] = [];
  const tty = () => Object.assign(new Writable({ write: (c: Buffer | string, _e, cb) => void (writes.push(c.toString()), cb()) }), { isTTY: true as const, columns: 120 });
  return { out: tty(), err: tty(), writes };
}


describe('batcherProgress on a terminal', () => {
  it('keeps its bar and the log lines apart: a line logged while the bar is drawn stands on its own, the bar below it', async () => {
    const t = terminal();
    const log = createLogger({ service: 'batcher', level: 'info', stdout: t.out });
    const summary = emptySummary();
    const progress = batcherProgress({ total: 8, done: 0, tty: true, log, summary: () => summary, stream: t.err });
    summary.blocks = summary.records = 1;
    progress.events.onBlock?.({ records: 1, kept: 1, dropped: {}, lineErrors: 0, bytes: 10 });
    log.error({ ordinal: 3, code: 'CCP_ERR_CDX_BLOCK' }, 'CDX block skipped');
    await new Promise((r) => setTimeout(r, 250)); // the bar's next ticks
    progress.events.onBlock?.({ records: 1, kept: 1, dropped: {}, lineErrors: 0, bytes: 10 });
    progress.stop();
    const shown = screen(t.writes).filter((l) => l !== '');
    expect(shown).toEqual([expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} ERROR batcher: CDX block skipped {2}ordinal=3 code=CCP_ERR_CDX_BLOCK$/), expect.stringMatching(/^blocks \S+ 2\/8 \| kept /)]);
  });
});
