import type { DuckDBInstance } from '@duckdb/node-api';
import { openDuck, sqlString, streamSortedStrings } from './duck';

describe('streamSortedStrings', () => {
  let db: DuckDBInstance;
  beforeAll(async () => {
    db = await openDuck();
  });
  afterAll(() => db.closeSync());

  const values = (list: string[]) => `SELECT * FROM (VALUES ${list.map((v) => `(${sqlString(v)})`).join(', ')}) t(v)`;
  const all = async (sql: string, bucket: number) => {
    const out: string[][] = [];
    for await (const b of streamSortedStrings(await db.connect(), sql, bucket)) out.push(b);
    return out;
  };

  it('yields every value once, in UTF-8 byte order, a bucket at a time', async () => {
    const names = ['b.example', 'a.example', 'é.fr', 'z.example', '😀.io', 'ab.example', 'a-very-long-registered-domain-name.example.co.uk'];
    const got = await all(values(names), 3);
    expect(got.map((b) => b.length)).toEqual([3, 3, 1]);
    expect(got.flat()).toEqual([...names].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
  });

  it('an empty query yields nothing; a value holding the separator or a NULL is an error, not a wrong list', async () => {
    expect(await all('SELECT v FROM (VALUES (1)) t(v) WHERE false', 4)).toEqual([]);
    await expect(all(values(['a.example', 'b\nc.example']), 4)).rejects.toThrow(/newline/);
    await expect(all("SELECT * FROM (VALUES ('a.example'), (NULL)) t(v)", 4)).rejects.toThrow(/NULL/);
  });
});
