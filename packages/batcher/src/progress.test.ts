import { Writable } from 'node:stream';
import { createLogger } from '@ccpipe/adapters';
import { emptySummary } from './batcher';
import { batcherProgress } from './progress';

/** One terminal: what stdout and stderr write, in order. */
function terminal(): { out: Writable & { isTTY: true; columns: number }; err: Writable & { isTTY: true; columns: number }; writes: string[] } {
  const writes: string[] = [];
  const tty = () => Object.assign(new Writable({ write: (c: Buffer | string, _e, cb) => void (writes.push(c.toString()), cb()) }), { isTTY: true as const, columns: 120 });
  return { out: tty(), err: tty(), writes };
}

/** The lines a terminal shows after `writes`: \r and cursor-to-column-1 return, erase codes erase, other codes do nothing. */
function screen(writes: string[]): string[] {
  const lines = [''];
  let col = 0;
  for (const tok of writes.join('').split(/(\x1b\[[0-9;?]*[A-Za-z]|\r|\n)/)) {
    const cur = lines.length - 1;
    if (tok === '\n') {
      lines.push('');
      col = 0;
    } else if (tok === '\r' || tok === '\x1b[1G') col = 0;
    else if (tok === '\x1b[2K') lines[cur] = '';
    else if (tok === '\x1b[0K' || tok === '\x1b[K') lines[cur] = lines[cur]!.slice(0, col);
    else if (tok.startsWith('\x1b[')) continue;
    else if (tok !== '') {
      lines[cur] = lines[cur]!.slice(0, col) + tok + lines[cur]!.slice(col + tok.length);
      col += tok.length;
    }
  }
  return lines.filter((l) => l !== '');
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
    const shown = screen(t.writes);
    expect(shown).toEqual([expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} ERROR batcher: CDX block skipped {2}ordinal=3 code=CCP_ERR_CDX_BLOCK$/), expect.stringMatching(/^blocks \S+ 2\/8 \| kept /)]);
  });
});
