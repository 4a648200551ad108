import { connectionEventFields, type AmqpConnectionEvent } from '../queue/amqp-connection';
import type { Logger } from './logger';

/**
 * Logs a broker connection event as the worker and the batcher do: `connected` at info, a give-up at error with its
 * reason as one plain sentence (what failed, which setting to check), anything else at warn with its reason. Never
 * the URL (it carries the password).
 */
export function logBrokerEvent(log: Logger, e: AmqpConnectionEvent): void {
  if (e.type === 'connected') log.info(connectionEventFields(e), 'broker');
  else if (e.type === 'gave-up') log.error({ code: (e.error as { code?: unknown }).code, reason: e.error.message }, 'broker unusable: stopping');
  else log.warn(connectionEventFields(e), 'broker');
}

/** The connection option for `--broker-give-up-ms`: 0 means never give up. */
export function giveUpAfterRefusedMs(configured: number): number {
  return configured === 0 ? Infinity : configured;
}
