import { EventEmitter } from 'node:events';
import * as amqp from 'amqplib';
import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib';
import { QueueError } from './queue-error';

/** Reconnect timings: exponential backoff `initialDelayMs · factor^(attempt-1)`, capped, with optional jitter. */
export interface ReconnectOptions {
  initialDelayMs: number;
  maxDelayMs: number;
  factor: number;
  /** 0..1: the delay is multiplied by a random factor in [1 - jitter, 1]. */
  jitter: number;
  /** Attempts after a loss (and for the first connect) before giving up; Infinity keeps trying. */
  maxAttempts: number;
}

export const DEFAULT_RECONNECT: ReconnectOptions = { initialDelayMs: 250, maxDelayMs: 30_000, factor: 2, jitter: 0.2, maxAttempts: Infinity };

/** Events an AmqpConnection reports; `detail` never carries credentials. */
export type AmqpConnectionEvent =
  | { type: 'connected'; attempt: number }
  | { type: 'lost'; error: Error | undefined }
  | { type: 'reconnect-scheduled'; attempt: number; delayMs: number; error: Error }
  | { type: 'gave-up'; error: Error }
  | { type: 'blocked'; reason: string }
  | { type: 'unblocked' }
  | { type: 'channel-error'; error: Error };

export interface AmqpConnectionOptions {
  /** `amqp://user:pass@host:port/vhost`. Never logged. */
  url: string;
  /** Shown in the management UI / `rabbitmqctl list_connections client_properties`. */
  name?: string;
  reconnect?: Partial<ReconnectOptions>;
  /** AMQP heartbeat in seconds (0 disables) unless the URL sets `?heartbeat=`. Default 30. */
  heartbeatSeconds?: number;
  /** Socket connect + handshake timeout. Default 10 s. */
  connectTimeoutMs?: number;
  /**
   * How long the broker may go on refusing — the login or the virtual host refused, nothing accepting connections at
   * its address, its host name not found ({@link brokerRefusalOf}) — before the connection gives up with
   * CCP_ERR_QUEUE_REFUSED, whatever `maxAttempts` allows. Counted from the first of an unbroken run of such failures;
   * any other failure or a connection restarts the count. Default Infinity (never).
   */
  giveUpAfterRefusedMs?: number;
  /** Injected for tests. */
  random?: () => number;
  /** Called for every lifecycle event (the owner logs / counts them). Must not throw. */
  onEvent?: (event: AmqpConnectionEvent) => void;
}

/**
 * What a service logs of a connection event: its type, attempt and delay, and why (the error's message: a refused
 * login and a broker that is down read differently). Never the URL, which carries the credentials. Pure.
 */
export function connectionEventFields(e: AmqpConnectionEvent): Record<string, unknown> {
  const { type, ...rest } = e;
  const fields: Record<string, unknown> = { event: type };
  for (const [k, v] of Object.entries(rest)) {
    if (v instanceof Error) fields['reason'] = v.message;
    else if (v !== undefined) fields[k] = v;
  }
  return fields;
}

/** Why a broker cannot be used that retrying will not mend; see {@link brokerRefusalOf}. */
export type BrokerRefusal = 'login-refused' | 'vhost-refused' | 'port-closed' | 'host-unknown';

/**
 * The refusal a failed connect attempt shows, or null for a failure that may pass (a timeout, a reset, a broker
 * starting up). Reads amqplib's handshake messages (403 ACCESS_REFUSED, 530 NOT_ALLOWED for a missing virtual host)
 * and the socket's error codes, also inside an AggregateError (Node tries each address of a host). Pure.
 */
export function brokerRefusalOf(err: unknown): BrokerRefusal | null {
  // read by shape, not instanceof: a socket error may come from another realm (a test VM, a worker thread)
  if (typeof err !== 'object' || err === null) return null;
  const { message, errors } = err as { message?: unknown; errors?: unknown };
  if (typeof message !== 'string') return null;
  if (/ACCESS[_-]REFUSED|\b403\b/.test(message)) return 'login-refused';
  if (/NOT[_-]ALLOWED|\b530\b/.test(message)) return 'vhost-refused';
  const codes = [err, ...(Array.isArray(errors) ? (errors as unknown[]) : [])].map((e) => (e as { code?: unknown } | null)?.code);
  if (codes.includes('ECONNREFUSED')) return 'port-closed';
  if (codes.includes('ENOTFOUND')) return 'host-unknown';
  return null;
}

/**
 * One plain sentence for a refusal that lasted `forMs`: what failed and which setting to check. Never the URL (it
 * carries the password). Pure.
 */
export function describeBrokerRefusal(refusal: BrokerRefusal, forMs: number): string {
  const during = `for ${Math.round(forMs / 1000)} s`;
  switch (refusal) {
    case 'login-refused':
      return `the broker refused the login (ACCESS_REFUSED) ${during}: check the user and password in RABBITMQ_URL (--rabbitmq)`;
    case 'vhost-refused':
      return `the broker refused the virtual host (NOT_ALLOWED) ${during}: check the vhost in RABBITMQ_URL (--rabbitmq)`;
    case 'port-closed':
      return `nothing accepted a connection at the broker's host and port (ECONNREFUSED) ${during}: check the host and port in RABBITMQ_URL (--rabbitmq) and that RabbitMQ is running`;
    case 'host-unknown':
      return `the broker's host name was not found (ENOTFOUND) ${during}: check the host in RABBITMQ_URL (--rabbitmq)`;
  }
}

/** Delay before reconnect attempt `attempt` (1-based). Pure. */
export function reconnectDelayMs(opts: ReconnectOptions, attempt: number, random: () => number = Math.random): number {
  const base = Math.min(opts.maxDelayMs, opts.initialDelayMs * opts.factor ** Math.max(0, attempt - 1));
  return Math.round(base * (1 - opts.jitter * random()));
}

/** Longest wait for a broker's CloseOk before an owner forgets a connection or channel. */
export const CLOSE_TIMEOUT_MS = 5_000;

/** Awaits `closing` for at most `ms`; never rejects. For close() paths that must not hang on a dead socket. */
export async function closeWithin(closing: Promise<unknown>, ms: number = CLOSE_TIMEOUT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([closing.catch(() => {}), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

function withHeartbeat(url: string, seconds: number): string {
  if (/[?&]heartbeat=/.test(url)) return url;
  return `${url}${url.includes('?') ? '&' : '?'}heartbeat=${seconds}`;
}

type State = 'idle' | 'connecting' | 'open' | 'reconnecting' | 'failed' | 'closed';

/**
 * One AMQP connection that reconnects with backoff after the broker or network drops it.
 * Channels do not survive a reconnect: owners listen for `'lost'` / `'connected'` (or their channel's `close`)
 * and open new channels. Every connection and channel made here has `error` and `close` listeners, so a broker
 * error never becomes an unhandled `error` event (which would kill Node).
 *
 * Emits `'connected'` (each time a connection opens), `'lost'` (error | undefined — a broker shutdown closes
 * without an error), `'closed'` (after close()) and `'gave-up'` (reconnect attempts exhausted, or refused too long).
 */
export class AmqpConnection extends EventEmitter {
  private readonly opts: Required<Omit<AmqpConnectionOptions, 'name' | 'onEvent'>> & { reconnect: ReconnectOptions };
  /** When the current unbroken run of refusals began (null: the last attempt was not refused). */
  private refusedSince: number | null = null;
  private readonly name: string;
  private readonly onEvent: (event: AmqpConnectionEvent) => void;
  private state: State = 'idle';
  private model: ChannelModel | null = null;
  private waiters: Array<{ resolve: (m: ChannelModel) => void; reject: (e: unknown) => void }> = [];
  private timer: NodeJS.Timeout | null = null;
  private lastError: Error | null = null;
  private blocked = false;

  constructor(options: AmqpConnectionOptions) {
    super();
    this.opts = {
      url: options.url,
      heartbeatSeconds: options.heartbeatSeconds ?? 30,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      giveUpAfterRefusedMs: options.giveUpAfterRefusedMs ?? Infinity,
      random: options.random ?? Math.random,
      reconnect: { ...DEFAULT_RECONNECT, ...options.reconnect },
    };
    this.name = options.name ?? 'ccpipe';
    this.onEvent = options.onEvent ?? (() => {});
    // An EventEmitter 'error' with no listener throws; we never emit it, but guard owners who might.
    this.on('error', () => {});
  }

  /** True while a connection is open. */
  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** True while the broker has blocked publishing (disk or memory alarm). */
  get isBlocked(): boolean {
    return this.blocked;
  }

  /**
   * Connects (retrying with backoff up to `maxAttempts`). Idempotent: later calls wait for the same connection.
   * Rejects with QueueError CCP_ERR_QUEUE_UNAVAILABLE when attempts run out, CCP_ERR_QUEUE_REFUSED when the broker
   * refused for longer than `giveUpAfterRefusedMs` (its message says what to check), CCP_ERR_QUEUE_CLOSED after close(), and
   * with the abort reason when `signal` aborts first (the attempts go on until close()).
   */
  async start(signal?: AbortSignal): Promise<void> {
    await this.ready(signal);
  }

  /**
   * The open connection, waiting for (re)connection if needed. Rejects like {@link start}; with `signal`,
   * rejects with the abort reason when aborted first.
   */
  ready(signal?: AbortSignal): Promise<ChannelModel> {
    if (this.state === 'open' && this.model) return Promise.resolve(this.model);
    if (this.state === 'closed') return Promise.reject(new QueueError('CCP_ERR_QUEUE_CLOSED', 'connection closed'));
    if (this.state === 'failed') {
      return Promise.reject(this.lastError instanceof QueueError ? this.lastError : new QueueError('CCP_ERR_QUEUE_UNAVAILABLE', 'broker unreachable', { cause: this.lastError }));
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    const p = new Promise<ChannelModel>((resolve, reject) => {
      const waiter = { resolve, reject };
      this.waiters.push(waiter);
      signal?.addEventListener(
        'abort',
        () => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(signal.reason);
        },
        { once: true },
      );
    });
    if (this.state === 'idle') void this.attempt(1);
    return p;
  }

  /** A new channel on the current connection, with an `error` listener attached. */
  async createChannel(signal?: AbortSignal): Promise<Channel> {
    const model = await this.ready(signal);
    return this.guard(await model.createChannel());
  }

  /** A new confirm-mode channel on the current connection, with an `error` listener attached. */
  async createConfirmChannel(signal?: AbortSignal): Promise<ConfirmChannel> {
    const model = await this.ready(signal);
    return this.guard(await model.createConfirmChannel());
  }

  /**
   * Closes the connection and stops reconnecting; pending ready() calls reject with CCP_ERR_QUEUE_CLOSED.
   * Idempotent; never throws (a connection the broker already dropped is simply forgotten).
   */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.rejectWaiters(new QueueError('CCP_ERR_QUEUE_CLOSED', 'connection closed'));
    const model = this.model;
    this.model = null;
    if (model) {
      // already closing or closed by the broker: forget it; a half-dead socket never answers CloseOk
      await closeWithin(model.close(), CLOSE_TIMEOUT_MS);
    }
    this.emit('closed');
  }

  /** Destroys the socket with an error, as a network failure would. For tests of reconnection. */
  destroySocketForTest(): void {
    const conn = (this.model as unknown as { connection?: { stream?: { destroy(err?: Error): void } } } | null)?.connection;
    // amqplib watches the socket's 'error' and 'end', not 'close', so the destroy must carry an error
    conn?.stream?.destroy(Object.assign(new Error('simulated network failure'), { code: 'ECONNRESET' }));
  }

  private guard<T extends Channel>(channel: T): T {
    channel.on('error', (error: Error) => this.onEvent({ type: 'channel-error', error }));
    channel.on('close', () => {});
    return channel;
  }

  private async attempt(attempt: number): Promise<void> {
    if (this.state === 'closed') return;
    this.state = attempt === 1 && this.state === 'idle' ? 'connecting' : this.state;
    let model: ChannelModel;
    try {
      model = await amqp.connect(withHeartbeat(this.opts.url, this.opts.heartbeatSeconds), {
        clientProperties: { connection_name: this.name },
        timeout: this.opts.connectTimeoutMs,
        noDelay: true,
      });
    } catch (err) {
      // an error of another realm fails instanceof: keep its code, which tells a closed port from a dropped one
      this.lastError = err instanceof Error ? err : Object.assign(new Error(String(err), { cause: err }), { code: (err as { code?: unknown } | null)?.code });
      this.scheduleRetry(attempt, this.lastError);
      return;
    }
    // close() may have run while we were connecting
    if ((this.state as State) === 'closed') {
      model.close().catch(() => {});
      return;
    }
    this.model = model;
    this.state = 'open';
    this.refusedSince = null;
    this.blocked = false;
    model.on('error', (error: Error) => {
      this.lastError = error;
    });
    model.on('blocked', (reason: string) => {
      this.blocked = true;
      this.onEvent({ type: 'blocked', reason });
    });
    model.on('unblocked', () => {
      this.blocked = false;
      this.onEvent({ type: 'unblocked' });
    });
    model.on('close', (error?: Error) => this.onLost(model, error));
    this.onEvent({ type: 'connected', attempt });
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.resolve(model);
    this.emit('connected');
  }

  private onLost(model: ChannelModel, error: Error | undefined): void {
    if (this.model !== model || this.state === 'closed') return;
    this.model = null;
    this.state = 'reconnecting';
    this.onEvent({ type: 'lost', error });
    this.emit('lost', error);
    this.scheduleRetry(0, error ?? new Error('connection closed by broker'));
  }

  private scheduleRetry(failedAttempt: number, error: Error): void {
    if (this.state === 'closed') return;
    const next = failedAttempt + 1;
    const refusal = failedAttempt === 0 ? null : brokerRefusalOf(error);
    const now = Date.now();
    this.refusedSince = refusal === null ? null : (this.refusedSince ?? now);
    const refusedMs = this.refusedSince === null ? 0 : now - this.refusedSince;
    if (refusal !== null && refusedMs >= this.opts.giveUpAfterRefusedMs) {
      this.giveUp(new QueueError('CCP_ERR_QUEUE_REFUSED', describeBrokerRefusal(refusal, refusedMs), { cause: error, detail: { refusal, refusedMs } }));
      return;
    }
    if (next > this.opts.reconnect.maxAttempts) {
      this.giveUp(new QueueError('CCP_ERR_QUEUE_UNAVAILABLE', 'broker unreachable', { cause: error }));
      return;
    }
    if (this.state !== 'connecting') this.state = 'reconnecting';
    // The first reconnect after a loss goes at once; failed attempts back off, and a refusal is tried once more when
    // its time is up, so the give-up comes on time rather than a whole backoff late.
    const backoffMs = failedAttempt === 0 ? 0 : reconnectDelayMs(this.opts.reconnect, failedAttempt, this.opts.random);
    const delayMs = refusal === null ? backoffMs : Math.max(0, Math.min(backoffMs, this.opts.giveUpAfterRefusedMs - refusedMs));
    this.onEvent({ type: 'reconnect-scheduled', attempt: next, delayMs, error });
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.attempt(next);
    }, delayMs);
  }

  /** Stops for good: `error` goes to the owner's event and to every waiter (later ready() calls get it too). */
  private giveUp(error: QueueError): void {
    this.state = 'failed';
    this.lastError = error;
    this.onEvent({ type: 'gave-up', error });
    this.rejectWaiters(error);
    this.emit('gave-up', error);
  }

  private rejectWaiters(err: unknown): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(err);
  }
}
