import type { Command } from 'commander';

/** `ccpipe mirror build|serve` — placeholder until the mirror package lands. */
export function registerMirrorCommand(program: Command): void {
  program.command('mirror').description('build or serve a local Common Crawl mirror');
}
