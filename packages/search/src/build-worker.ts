import { parentPort } from 'node:worker_threads';
import { ShardBuilder } from './build-search-shard';
import type { BuildReply, BuildRequest } from './build-pool';

/**
 * The thread of a {@link ShardBuildPool}: one {@link ShardBuilder} per build id. Every request gets one reply — an
 * `ack` for `begin` and `docs`, `done` with the result for `end`, or `error` (the build is then aborted: its temp file
 * removed; the thread serves other builds on).
 */
const builders = new Map<number, ShardBuilder>();
const reply = (r: BuildReply): void => parentPort!.postMessage(r);

parentPort!.on('message', (m: BuildRequest) => {
  try {
    if (m.type === 'begin') {
      builders.set(m.id, new ShardBuilder(m.path, m.opts));
      reply({ type: 'ack', id: m.id });
    } else if (m.type === 'docs') {
      builder(m.id).add(m.docs);
      reply({ type: 'ack', id: m.id });
    } else if (m.type === 'end') {
      const result = builder(m.id).finish();
      builders.delete(m.id);
      reply({ type: 'done', id: m.id, result });
    } else {
      builders.get(m.id)?.abort();
      builders.delete(m.id);
    }
  } catch (err) {
    builders.get(m.id)?.abort();
    builders.delete(m.id);
    if (m.type !== 'abort') reply({ type: 'error', id: m.id, name: (err as Error).name, message: (err as Error).message });
  }
});

function builder(id: number): ShardBuilder {
  const b = builders.get(id);
  if (b === undefined) throw new Error(`no shard build ${id} in this thread`);
  return b;
}
