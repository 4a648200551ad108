import type { ObjectStore } from '@ccpipe/core';

/**
 * `store` whose writes (put, delete) first pass `check`, which throws when this writer may no longer write: the
 * merge's lease lost (run-merge.ts), a merge task whose merge has ended (merge-task.ts). Reads go straight through.
 */
export function fencedStore(store: ObjectStore, check: () => void | Promise<void>): ObjectStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      if (prop === 'put' || prop === 'delete') {
        return async (...args: unknown[]) => {
          await check();
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
}
