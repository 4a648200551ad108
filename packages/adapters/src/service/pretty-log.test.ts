import { Writable } from 'node:stream';
import { screen } from '../../../../tests/support/terminal';
import { createLogger } from './logger';
import { CLEAR_LINE, StatusLine, prettyDestination, prettyLogLine } from './pretty-log';

/** A stream that keeps what is written; `isTTY` as asked. */
function sink(isTTY: boolean, into: string[] = []): Writable & { isTTY: boolean; chunks: string[] } {
  return Object.assign(new Writable({ write: (c: Buffer | string, _e, cb) => void (into.push(c.toString()), cb()) }), { isTTY, chunks: into });
}

describe('createLogger', () => {
  it('writes pino JSON when stdout is not a terminal (compose, CI, a pipe): the fields and their order as before', () => {
    const out = sink(false);
    const log = createLogger({ service: 'batcher', level: 'info', stdout: out });
    log.info({ planned: 3, source: 'local file' }, 'plan ready');
    log.flush();
    expect(out.chunks.join('')).toMatch(new RegExp(`^\\{"level":"info","time":"\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z","service":"batcher","pid":${process.pid},"planned":3,"source":"local file","msg":"plan ready"\\}\\n$`));
  });

  it('writes lines for a person when stdout is a terminal', () => {
    const out = sink(true);
    const log = createLogger({ service: 'worker', level: 'info', stdout: out });
    log.info({ batchId: 'CC-MAIN-2030-40/00000001/0000', rows: 12, skipped: false }, 'batch done');
    log.debug({ hidden: true }, 'below the level');
    expect(out.chunks).toEqual([expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} INFO  worker: batch done {2}batchId=CC-MAIN-2030-40\/00000001\/0000 rows=12 skipped=false\n$/)]);
  });
});

describe('prettyLogLine', () => {
  it('quotes text with spaces, shows objects as JSON, and an error by code and message (its stack at error level)', () => {
    const err = { type: 'CcpError', message: 'the store refused', code: 'CCP_ERR_STORE', stack: 'CcpError: the store refused\n    at put (store.ts:1:1)' };
    const line = JSON.stringify({ level: 'error', time: '2030-01-02T03:04:05.678Z', service: 'merger', pid: 7, msg: 'merge failed', reason: 'disk full', dropped: { status: 2 }, err });
    expect(prettyLogLine(line)).toBe(
      '03:04:05.678 ERROR merger: merge failed  reason="disk full" dropped={"status":2} err="CCP_ERR_STORE: the store refused"\n' +
        '    CcpError: the store refused\n        at put (store.ts:1:1)\n',
    );
    expect(prettyLogLine(line.replace('"error"', '"warn"'))).toBe('03:04:05.678 WARN  merger: merge failed  reason="disk full" dropped={"status":2} err="CCP_ERR_STORE: the store refused"\n');
    expect(prettyLogLine(line, true)).toContain('\x1b[31mERROR\x1b[0m');
    expect(prettyLogLine('not json')).toBe('not json\n');
  });
});


describe('prettyDestination with a status line', () => {
  it('wipes the bar a status line holds before each log line, and nothing once it is released', () => {
    const term: string[] = [];
    const err = sink(true, term);
    const status = new StatusLine();
    const dest = prettyDestination(sink(true, term), status);
    err.write('blocks ████░░░░ 4/8');
    const release = status.hold(() => void err.write(CLEAR_LINE));
    dest.write(JSON.stringify({ level: 'warn', time: '2030-01-02T03:04:05.678Z', service: 'batcher', msg: 'CDX block skipped', code: 'CCP_ERR_CDX_BLOCK' }) + '\n');
    err.write('\rblocks █████░░░ 5/8');
    expect(screen(term)).toEqual(['03:04:05.678 WARN  batcher: CDX block skipped  code=CCP_ERR_CDX_BLOCK', 'blocks █████░░░ 5/8']);
    release();
    release();
    term.length = 0;
    dest.write(JSON.stringify({ level: 'info', msg: 'after' }));
    expect(term).toEqual(['INFO  after\n']);
  });
});
