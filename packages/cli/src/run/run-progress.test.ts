import { emptyCounters, runBarState, type RunCounters } from './run-progress';

const at = (over: Partial<RunCounters>): RunCounters => ({ ...emptyCounters(), ...over });

describe("runBarState: ccpipe run's bar", () => {
  it('does not reach its end while batches of blocks already read are still being processed', () => {
    // every block read (the batcher runs ahead of the worker by its publish window), 40 batches published, 30 done
    const s = runBarState(at({ blocksPlanned: 12, blocksRead: 12, batchesPublished: 40, batchesDone: 29, batchesFailed: 1 }));
    expect(s).toEqual({ value: 30, total: 40 });
  });

  it('reaches its end exactly when the last block is read and its last batch settled (done or dead-lettered)', () => {
    expect(runBarState(at({ blocksPlanned: 12, blocksRead: 12, batchesPublished: 40, batchesDone: 39, batchesFailed: 1 }))).toEqual({ value: 40, total: 40 });
    // blocks skipped as unreadable count as handled
    expect(runBarState(at({ blocksPlanned: 12, blocksRead: 10, blocksFailed: 2, batchesPublished: 40, batchesDone: 40 }))).toEqual({ value: 40, total: 40 });
  });

  it('counts on the blocks not read yet yielding batches at the rate seen so far (resumed blocks excepted)', () => {
    // 10 blocks resumed past, 5 read here giving 20 batches: 5 more blocks ≈ 20 more batches
    expect(runBarState(at({ blocksPlanned: 20, blocksRead: 15, blocksResumed: 10, batchesPublished: 20, batchesDone: 10 }))).toEqual({ value: 10, total: 40 });
    expect(runBarState(at({ blocksPlanned: 8 }))).toEqual({ value: 0, total: 8 }); // nothing read yet: a batch a block
    expect(runBarState(at({}))).toEqual({ value: 0, total: 1 });
  });

  it('never shows more done than its total (batches of an earlier run tried again are settled unpublished)', () => {
    expect(runBarState(at({ blocksPlanned: 2, blocksRead: 2, blocksResumed: 2, batchesDone: 3 }))).toEqual({ value: 3, total: 3 });
  });
});
