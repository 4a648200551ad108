import type { ExtractErrorCode, Extracted, ExtractOptions } from '@ccpipe/core';

/** What each extraction worker is started with (`workerData`). */
export interface ExtractWorkerConfig {
  options: Omit<ExtractOptions, 'url'>;
}

/** One document sent to a worker. */
export interface ExtractRequest {
  id: number;
  html: string;
  url: string;
}

/** A failure as it crosses the thread boundary (core's `wireErrorOf` makes one). */
export interface WireError {
  code: ExtractErrorCode;
  message: string;
  detail?: Record<string, unknown>;
}

/** A worker's answer to one {@link ExtractRequest} (`R`: the result of another request a worker script of the caller's answers). */
export type ExtractReply<R = Extracted> = { id: number; ok: true; result: R } | { id: number; ok: false; error: WireError };

/** Posted once by a worker when its modules have loaded and it can take documents. */
export interface ExtractReady {
  ready: true;
}
