/**
 * A RabbitMQ node of the chaos suite's own: a second `rabbitmq-server` on free ports with its data, logs and config in
 * a temp dir, so the suite can stop and start it (`stop_app` / `start_app`) without touching the broker on 5672 that
 * other tests and people share. Management and Prometheus plugins are off (their ports belong to the shared node).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { connect } from 'amqplib';

const run = (cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, timeoutMs = 60_000): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile(cmd, args, { env, timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** A running node of the suite's own. Every method is async: the test process also serves the mirror. */
export interface OwnBroker {
  node: string;
  port: number;
  url: string;
  /** `rabbitmqctl stop_app` then, after `downMs`, `start_app`, then waits for AMQP logins to work again. */
  restartApp(downMs: number): Promise<void>;
  /** Ready messages of `queue` (amqplib checkQueue on a fresh connection). */
  depth(queue: string): Promise<number>;
  /** Stops the node and removes its directory; idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the node and waits until it accepts AMQP logins (guest/guest on 127.0.0.1). As root, the Debian wrappers
 * run the node as the `rabbitmq` user (whose Erlang cookie `rabbitmqctl` then shares), so the dir is given to it.
 * @throws Error when the node does not come up within `timeoutMs` (its log dir is named in the message).
 */
export async function startOwnBroker(timeoutMs = 90_000): Promise<OwnBroker> {
  const dir = await mkdtemp(join(tmpdir(), 'ccpipe-chaos-rmq-'));
  const node = `ccpipe-chaos-${randomBytes(3).toString('hex')}@localhost`;
  const [port, distPort] = [await freePort(), await freePort()];
  await mkdir(join(dir, 'mnesia'));
  await mkdir(join(dir, 'log'));
  await writeFile(join(dir, 'rabbitmq.conf'), `listeners.tcp.local = 127.0.0.1:${port}\n`);
  await writeFile(join(dir, 'enabled_plugins'), '[].\n');
  await writeFile(join(dir, 'rabbitmq-env.conf'), ''); // not /etc/rabbitmq's, which names the shared node
  if (userInfo().uid === 0) await run('chown', ['-R', 'rabbitmq:rabbitmq', dir]);
  await chmod(dir, 0o755);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_PID_FILE: join(dir, 'node.pid'),
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    ERL_EPMD_ADDRESS: '127.0.0.1',
  };
  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  const ctl = (...args: string[]): Promise<string> => run('rabbitmqctl', ['-q', '-n', node, ...args]);
  const waitForLogin = async (what: string): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const c = await connect(url);
        c.on('error', () => undefined);
        await c.close();
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`chaos broker ${node}: ${what} (logs in ${join(dir, 'log')}): ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  };
  await run('rabbitmq-server', ['-detached'], env);
  await waitForLogin('did not accept logins');

  let stopped: Promise<void> | undefined;
  return {
    node,
    port,
    url,
    async restartApp(downMs) {
      await ctl('stop_app');
      await new Promise((r) => setTimeout(r, downMs));
      await ctl('start_app');
      await waitForLogin('did not come back after start_app');
    },
    async depth(queue) {
      const c = await connect(url);
      c.on('error', () => undefined); // an unhandled 'error' event would end the test process
      try {
        const ch = await c.createChannel();
        ch.on('error', () => undefined);
        return (await ch.checkQueue(queue)).messageCount;
      } finally {
        await c.close().catch(() => undefined);
      }
    },
    stop: () =>
      (stopped ??= (async () => {
        await ctl('stop').catch(() => undefined);
        await rm(dir, { recursive: true, force: true });
      })()),
  };
}
