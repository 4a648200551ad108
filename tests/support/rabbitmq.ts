import { execFileSync } from 'node:child_process';

/**
 * Closes the connection whose client name is `name` from the broker side (as an operator or a broker restart would),
 * through `rabbitmqctl`. @throws Error unless exactly one connection has that name.
 */
export function killConnectionFromBroker(name: string): void {
  const out = execFileSync('rabbitmqctl', ['-q', 'list_connections', '--no-table-headers', 'pid', 'client_properties'], { encoding: 'utf8' });
  const pids = out
    .split('\n')
    .filter((l) => l.includes(`"${name}"`))
    .map((l) => l.split('\t')[0]!)
    .filter((p) => p.startsWith('<'));
  if (pids.length !== 1) throw new Error(`expected one broker connection named ${name}, found ${pids.length}`);
  execFileSync('rabbitmqctl', ['-q', 'close_connection', pids[0]!, 'ccpipe test: kill consumer connection']);
}
