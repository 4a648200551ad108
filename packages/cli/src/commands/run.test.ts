import { Command } from 'commander';
import { registerRunCommand } from './run';

describe('ccpipe run flags', () => {
  it('--base-url without --crawl is refused (it would be ignored: the bundled sample has its own mirror)', async () => {
    const program = new Command('ccpipe').exitOverride();
    registerRunCommand(program);
    await expect(program.parseAsync(['node', 'ccpipe', 'run', '--base-url', 'http://127.0.0.1:9/', '--data', '/nonexistent-ccpipe-dir'])).rejects.toThrow(/--base-url needs --crawl/);
  });
});
