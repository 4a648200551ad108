// Worker-thread entry of SearchRunner: runs one searchShards() per message over shard files it keeps open (least
// recently used closed past `maxOpenShards`). Synchronous: a search blocks this thread, never the runner's.
import { statSync, type Stats } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { SearchError } from '@ccpipe/core';
import { openSearchShard, type SearchShard } from './open-search-shard';
import { searchShards } from './search-shards';
import type { SearchReady, SearchReply, SearchRequest, SearchWorkerConfig, WireError } from './search-messages';

interface OpenShard {
  shard: SearchShard;
  /** The file it was opened from: a path whose file was replaced is opened again. */
  id: string;
}

const port = parentPort;
if (!port) throw new Error('search-worker must run in a worker thread');
const config = workerData as SearchWorkerConfig;
/** Open shards by path, least recently used first (a Map keeps insertion order). */
const open = new Map<string, OpenShard>();

const fileId = (st: Stats | undefined): string => (st ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}` : '');

/** The open shard at `path`, opened now if it is not open or its file changed. @throws SearchError CCP_ERR_SEARCH_SHARD */
function shardAt(path: string): SearchShard {
  const id = fileId(statSync(path, { throwIfNoEntry: false }));
  const cached = open.get(path);
  if (cached) {
    open.delete(path);
    if (cached.id === id) {
      open.set(path, cached);
      return cached.shard;
    }
    cached.shard.close();
  }
  const shard = openSearchShard(path);
  open.set(path, { shard, id });
  return shard;
}

/** Closes the given shards (after an unexpected failure: the next search opens them afresh). */
function forget(paths: readonly string[]): void {
  for (const p of paths) {
    open.get(p)?.shard.close();
    open.delete(p);
  }
}

/** Closes the least recently used shards beyond `maxOpenShards`. */
function trim(): void {
  for (const [p, o] of open) {
    if (open.size <= config.maxOpenShards) return;
    o.shard.close();
    open.delete(p);
  }
}

function toWire(err: unknown): WireError {
  if (err instanceof SearchError) return err.detail ? { code: err.code, message: err.message, detail: err.detail } : { code: err.code, message: err.message };
  const code = (err as { code?: unknown } | null)?.code;
  return { code: typeof code === 'string' ? code : undefined, message: err instanceof Error ? err.message : 'search failed' };
}

function run(req: SearchRequest): SearchReply {
  try {
    const deadline = performance.now() + req.budgetMs;
    const shards = req.paths.map(shardAt);
    return { id: req.id, ok: true, result: searchShards(shards, req.query, { ...req.opts, deadline }) };
  } catch (err) {
    if (!(err instanceof SearchError)) forget(req.paths);
    return { id: req.id, ok: false, error: toWire(err) };
  } finally {
    trim();
  }
}

port.on('message', (req: SearchRequest) => {
  const reply = run(req);
  try {
    port.postMessage(reply);
  } catch {
    // a detail that cannot be cloned: the error without it
    port.postMessage(reply.ok ? reply : { ...reply, error: { code: reply.error.code, message: reply.error.message } });
  }
});
const ready: SearchReady = { ready: true };
port.postMessage(ready);
