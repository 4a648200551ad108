import { Channel } from './channel';

async function drain<T>(c: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of c) out.push(x);
  return out;
}

describe('Channel', () => {
  it('hands over items pushed before and while the consumer waits, in order, and ends at close', async () => {
    const c = new Channel<number>();
    c.push(1);
    const got = drain(c);
    c.push(2);
    await Promise.resolve();
    c.push(3);
    c.close();
    expect(await got).toEqual([1, 2, 3]);
    expect(() => c.push(4)).toThrow(/closed/);
  });

  it('throws the failure after the items pushed before it', async () => {
    const c = new Channel<string>();
    const seen: string[] = [];
    const got = (async () => {
      for await (const x of c) seen.push(x);
    })();
    c.push('a');
    await new Promise((r) => setImmediate(r));
    c.push('b');
    c.fail(new Error('export failed'));
    await expect(got).rejects.toThrow('export failed');
    expect(seen).toEqual(['a', 'b']);
  });

  it('ends a waiting consumer at close with nothing pushed', async () => {
    const c = new Channel<number>();
    const got = drain(c);
    c.close();
    expect(await got).toEqual([]);
  });
});
