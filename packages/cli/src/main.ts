import { Command, CommanderError } from 'commander';
import { CcpError } from '@ccpipe/core';
import { registerUrlCommand } from './commands/url';
import { registerMirrorCommand } from './commands/mirror';
import { registerServiceCommands } from './commands/services';
import { registerMergeCommand } from './commands/merge';
import { registerMergeWorkerCommand } from './commands/merge-worker';
import { registerApiCommand } from './commands/api';
import { registerRunCommand } from './commands/run';
import { registerStatusCommand } from './commands/status';
import { registerVerifyCommand } from './commands/verify';
import { registerImportCommand } from './commands/import';

/** Builds the `ccpipe` command tree. Commands only parse arguments and call the services' mains. */
export function buildProgram(): Command {
  const program = new Command('ccpipe')
    .description('Common Crawl and WARC collections into a versioned Domain → Datasets → URLs index')
    .version('0.1.0')
    .exitOverride();
  registerUrlCommand(program);
  registerMirrorCommand(program);
  registerServiceCommands(program);
  registerMergeCommand(program);
  registerMergeWorkerCommand(program);
  registerImportCommand(program);
  registerApiCommand(program);
  registerRunCommand(program);
  registerStatusCommand(program);
  registerVerifyCommand(program);
  return program;
}

/** Runs the CLI; resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  process.exitCode = 0;
  const program = buildProgram();
  // `ccpipe serve --help` would print the top-level help and exit 0 (commander handles --help before it looks at
  // the command): an unknown command is an error whatever flags follow it
  const first = argv[2];
  if (first !== undefined && !first.startsWith('-') && first !== 'help' && !program.commands.some((c) => c.name() === first || c.aliases().includes(first))) {
    process.stderr.write(`error: unknown command '${first}' (see ccpipe --help)\n`);
    return 1;
  }
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    throw err;
  }
  return typeof process.exitCode === 'number' ? process.exitCode : 0;
}

/**
 * What the CLI prints for an error that ends a command: ccpipe's own errors (a bad flag or setting, a damaged index,
 * a store refusing) as one line with their message and code, since a stack trace says nothing more to the user;
 * anything else (a bug) with its stack. `LOG_LEVEL=debug` (or trace) prints the stack, cause and detail for every error.
 */
export function describeCliError(err: unknown, logLevel: string | undefined): string {
  if (err instanceof CcpError && logLevel !== 'debug' && logLevel !== 'trace') return `ccpipe: ${err.message} [${err.code}]`;
  if (!(err instanceof Error)) return String(err);
  const extra = err instanceof CcpError ? [err.detail === undefined ? '' : `detail: ${JSON.stringify(err.detail)}`, err.cause === undefined ? '' : `cause: ${String((err.cause as Error).stack ?? err.cause)}`] : [];
  return [err.stack ?? String(err), ...extra.filter(Boolean)].join('\n');
}

