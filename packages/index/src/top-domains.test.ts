import { TopDomains } from './top-domains';

describe('TopDomains', () => {
  it('keeps the k largest domains per dataset, most URLs first, ties by name, whatever the order they come in', () => {
    let s = 5;
    const rnd = () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const all = new Map<number, [string, number][]>([[1, []], [2, []]]);
    const top = new TopDomains(7);
    for (let i = 0; i < 500; i++) {
      const d = rnd() < 0.5 ? 1 : 2;
      const e: [string, number] = [`d${Math.floor(rnd() * 1e6)}-${i}.example`, Math.floor(rnd() * 20)];
      all.get(d)!.push(e);
      top.add(d, e[0], e[1]);
    }
    const want = (d: number) => [...all.get(d)!].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 7);
    expect(top.toFile()).toEqual({ v: 1, datasets: [{ datasetId: 1, domains: want(1) }, { datasetId: 2, domains: want(2) }] });
  });
});
