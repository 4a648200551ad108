import { setMaxListeners } from 'node:events';

/**
 * An AbortSignal that fires on the first SIGINT or SIGTERM; a second signal exits at once with 130. `dispose()`
 * removes the handlers. The service's main drains in-flight work when the signal fires, then closes its resources
 * in reverse order.
 */
export function shutdownSignal(onSignal?: (sig: NodeJS.Signals) => void): { signal: AbortSignal; dispose(): void } {
  const ctl = new AbortController();
  // Every in-flight read listens on this one signal; Node's default cap of 10 would warn of a leak that is not one.
  setMaxListeners(0, ctl.signal);
  const handler = (sig: NodeJS.Signals): void => {
    if (ctl.signal.aborted) process.exit(130);
    onSignal?.(sig);
    ctl.abort(new Error(`received ${sig}`));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: ctl.signal,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
