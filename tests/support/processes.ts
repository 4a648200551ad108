import { spawn, type ChildProcess } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from './corpus';

/** The built CLI, exactly as users run it. */
export const CCPIPE_BIN = join(REPO_ROOT, 'packages', 'cli', 'bin', 'ccpipe.js');

/** A ccpipe process started by a test, with its JSON log lines collected. */
export interface CcpipeProcess {
  child: ChildProcess;
  /** Parsed JSON log lines so far (stdout). */
  logs: Record<string, unknown>[];
  /** Non-JSON output (stderr and stray stdout), for failure messages. */
  text: string[];
  /** Everything written to stdout, as written (a command's pretty-printed JSON, whose lines `logs` and `text` split). */
  stdout: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `ccpipe ARGS…` with `env` over the test's environment. */
export function spawnCcpipe(args: string[], env: Record<string, string> = {}): CcpipeProcess {
  const child = spawn(process.execPath, [CCPIPE_BIN, ...args], { env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc: CcpipeProcess = {
    child,
    logs: [],
    text: [],
    stdout: '',
    exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
  };
  let buf = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    proc.stdout += chunk;
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        proc.logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        proc.text.push(line);
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => proc.text.push(chunk));
  return proc;
}

/** Polls `check` every `everyMs` until it returns a truthy value; throws with `what` after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T> | T, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Keys of every batch completion marker under a local data store. */
export async function markersIn(dataDir: string): Promise<string[]> {
  const out: string[] = [];
  const root = join(dataDir, 'batches');
  let datasets: string[];
  try {
    datasets = await readdir(root);
  } catch {
    return out;
  }
  for (const ds of datasets) {
    for (const b of await readdir(join(root, ds))) {
      const files = await readdir(join(root, ds, b)).catch(() => [] as string[]);
      if (files.includes('_SUCCESS.json')) out.push(join(root, ds, b, '_SUCCESS.json'));
    }
  }
  return out;
}

/** The first log line with `msg`, or undefined. */
export const logLine = (p: CcpipeProcess, msg: string): Record<string, unknown> | undefined => p.logs.find((l) => l['msg'] === msg);

/** Kills what is still running (best effort) — for afterAll/afterEach. */
export async function killAll(procs: CcpipeProcess[]): Promise<void> {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
}
