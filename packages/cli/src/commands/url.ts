import type { Command } from 'commander';

/** `ccpipe url URL...` — placeholder until the URL module lands. */
export function registerUrlCommand(program: Command): void {
  program.command('url').argument('<urls...>').action(() => {
    throw new Error('not implemented yet');
  });
}
