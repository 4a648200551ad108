import { setMaxListeners } from 'node:events';
import { decodeMessage, isWarcJob, queueActionFor, type Batch, type BatchConsumer, type Delivery, type QueueMessage } from '@ccpipe/core';
import { systemClock } from '@ccpipe/adapters';
import { processBatch, type BatchDeps, type BatchMarker, type BatchOptions } from './process-batch';
import { processWarcJob } from './process-warc-job';

/** Hooks a worker's owner uses to log and count (closed-set labels only; never URLs). */
export interface WorkerEvents {
  onBatchDone?(e: { batchId: string; marker: BatchMarker; skipped: boolean; redelivered: boolean; ms: number }): void;
  onBatchFailed?(e: { batchId: string | null; action: 'requeue' | 'dead-letter' | 'crash'; reason: string; error: unknown }): void;
}

/** How a worker runs its batches. */
export interface WorkerOptions extends BatchOptions {
  /**
   * Before a retryable failure is requeued, the worker holds the delivery for `baseMs × 2^deliveryCount` (jittered,
   * at most `maxMs`; cut short by a drain): an outage (the origin's 503 SlowDown, a store down) then slows the
   * worker down instead of using up the batch's delivery limit in seconds. Default 1,000 / 30,000 ms.
   */
  requeueBackoff?: { baseMs: number; maxMs: number };
  /**
   * Checks each batch belongs in the worker's store before any of it is read or written (store-identity.ts); a batch
   * it refuses is dead-lettered with its code. Default: none (tests over a bare store).
   */
  identity?: { check(batch: Pick<Batch, 'store' | 'dataset' | 'datasetId'>): Promise<void> };
}

/** A running worker. */
export interface RunningWorker {
  /** Stops taking batches, lets in-flight ones finish (up to `graceMs`, then aborts them: they are requeued), closes the consumer. */
  drain(graceMs: number): Promise<void>;
  /** Resolves with the error when a batch failed in a way that must stop the process (disk full, …). */
  readonly crashed: Promise<unknown>;
}

/**
 * Consumes batches and handles each with {@link processBatch}. What happens to a delivery is decided in one place,
 * `queueActionFor`: done → ack; a message that is not a batch or a non-retryable failure → dead-letter with its code;
 * anything else → requeue (the queue's delivery limit bounds retries); a local system failure → crash.
 */
export async function startWorker(consumer: BatchConsumer, deps: BatchDeps, opts: WorkerOptions, events: WorkerEvents = {}): Promise<RunningWorker> {
  const backoff = opts.requeueBackoff ?? { baseMs: 1_000, maxMs: 30_000 };
  const stopping = new AbortController(); // a drain began: pauses before a requeue end at once
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // one listener per in-flight record read
  const inFlight = new Set<Promise<void>>();
  let crash: (err: unknown) => void = () => undefined;
  const crashed = new Promise<unknown>((resolve) => (crash = resolve));

  const handle = async (d: Delivery): Promise<void> => {
    // the worker draining, or this delivery's channel lost (the broker redelivers it: working on would run it twice);
    // one controller per delivery whose listeners go in `finally` (AbortSignal.any kept every combined signal alive
    // as long as the worker's own: ≈ 74 B per delivery on Node 20)
    const own = new AbortController();
    setMaxListeners(0, own.signal);
    const follow = (s: AbortSignal): (() => void) => {
      const on = (): void => own.abort(s.reason);
      if (s.aborted) on();
      else s.addEventListener('abort', on, { once: true });
      return () => s.removeEventListener('abort', on);
    };
    const unfollow = [follow(abort.signal), ...(d.signal === undefined ? [] : [follow(d.signal)])];
    try {
      // once its batch is handled, a drain that begins also ends the delivery's pause before a requeue
      await handleWith(d, own.signal, () => unfollow.push(follow(stopping.signal)));
    } finally {
      for (const u of unfollow) u();
    }
  };

  const handleWith = async (d: Delivery, signal: AbortSignal, settling: () => void): Promise<void> => {
    const started = Date.now();
    let batch: QueueMessage | null = null;
    let outcome: { ok: true } | { ok: false; error: unknown };
    const redelivered = d.redelivered || d.deliveryCount > 0;
    try {
      batch = decodeMessage(d.body);
      await opts.identity?.check(batch);
      if (isWarcJob(batch)) {
        // bulk mode: one WARC file, its sub-batches each reported as a batch
        const r = await processWarcJob(batch, deps, opts, signal);
        for (const b of r.batches) events.onBatchDone?.({ batchId: b.id, marker: b.outcome.marker, skipped: b.outcome.skipped, redelivered, ms: b.ms });
      } else {
        const r = await processBatch(batch, deps, opts, signal);
        events.onBatchDone?.({ batchId: batch.id, marker: r.marker, skipped: r.skipped, redelivered, ms: Date.now() - started });
      }
      outcome = { ok: true };
    } catch (error) {
      outcome = { ok: false, error };
    }
    const decided = queueActionFor(outcome);
    // a failure of this machine stops the worker whatever else happened; otherwise an aborted batch goes back
    const { action, reason } = signal.aborted && !outcome.ok && decided.action !== 'crash'
      ? { action: 'requeue' as const, reason: d.signal?.aborted === true ? 'CCP_ERR_QUEUE_CHANNEL_CLOSED' : 'CCP_ERR_ABORTED' }
      : decided;
    settling(); // decided: from here a drain only shortens the pause before a requeue
    if (!outcome.ok) events.onBatchFailed?.({ batchId: batch?.id ?? null, action: action as 'requeue' | 'dead-letter' | 'crash', reason: reason ?? 'unknown', error: outcome.error });
    if (action === 'crash') {
      crash(outcome.ok ? new Error('crash') : outcome.error);
      return;
    }
    const channelLost = (): boolean => d.signal?.aborted === true;
    if (channelLost()) return; // its channel is gone: nothing can be settled, the broker redelivers it
    switch (action) {
      case 'ack':
        await d.ack();
        break;
      case 'dead-letter':
        await d.deadLetter(reason ?? 'unknown');
        break;
      case 'requeue': {
        // a failure of the moment (not a drain or a lost channel): hold the delivery a while first, which also keeps
        // its prefetch slot, so the worker takes new batches more slowly while the failures last
        const ms = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(20, d.deliveryCount)) * (0.5 + Math.random() / 2);
        await systemClock.sleep(ms, signal).catch(() => undefined);
        if (channelLost()) return;
        await d.requeue();
        break;
      }
    }
  };

  await consumer.start((d) => {
    const p = handle(d).catch((err: unknown) => {
      // Settling failed (channel lost): the broker redelivers the message; nothing else to do here.
      events.onBatchFailed?.({ batchId: null, action: 'requeue', reason: 'CCP_ERR_QUEUE_SETTLE', error: err });
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
    return p;
  });

  let draining: Promise<void> | null = null;
  return {
    crashed,
    drain: (graceMs) =>
      (draining ??= (async () => {
        stopping.abort();
        await consumer.stop();
        const timer = setTimeout(() => abort.abort(new Error('drain grace period over')), graceMs);
        try {
          await Promise.allSettled([...inFlight]);
        } finally {
          clearTimeout(timer);
        }
        await consumer.close();
      })()),
  };
}

