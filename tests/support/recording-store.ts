import { MemoryObjectStore } from '@ccpipe/adapters';

/** A MemoryObjectStore that records every range read (which bytes a reader fetched, in order). */
export class RecordingStore extends MemoryObjectStore {
  ranges: { key: string; offset: number; length: number }[] = [];

  override async getRange(key: string, offset: number, length: number): Promise<Uint8Array> {
    this.ranges.push({ key, offset, length });
    return super.getRange(key, offset, length);
  }
}
