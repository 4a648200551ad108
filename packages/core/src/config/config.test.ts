import { ConfigError, describeOptions, loadConfig } from './config';

describe('loadConfig', () => {
  it('applies defaults', () => {
    const c = loadConfig({});
    expect(c.data).toBe('./data');
    expect(c.rabbitmqUrl).toBe('amqp://guest:guest@127.0.0.1:5672');
    expect(c.baseUrl).toBe('https://data.commoncrawl.org');
    expect(c.filterStatus).toEqual(['200']);
    expect(c.filterLanguages).toEqual(['eng']);
    expect(c.includeText).toBe(true);
    expect(c.crawl).toBeUndefined();
  });

  it('takes env vars, and flags over env vars', () => {
    const env = { CC_BASE_URL: 'http://127.0.0.1:8081', CCPIPE_BATCH_SIZE: '50', CCPIPE_INCLUDE_TEXT: 'false', CCPIPE_FILTER_STATUS: '200, 301' };
    const c = loadConfig(env, { batchSize: '7', crawl: 'CC-MAIN-2030-40' });
    expect(c.baseUrl).toBe('http://127.0.0.1:8081');
    expect(c.batchSize).toBe(7);
    expect(c.includeText).toBe(false);
    expect(c.filterStatus).toEqual(['200', '301']);
    expect(c.crawl).toBe('CC-MAIN-2030-40');
  });

  it("turns a filter off with 'any' (env or flag) or an empty flag value; an empty env var is unset", () => {
    expect(loadConfig({ CCPIPE_FILTER_LANGUAGES: 'any', CCPIPE_FILTER_STATUS: '*' })).toMatchObject({ filterLanguages: [], filterStatus: [] });
    expect(loadConfig({}, { filterLanguages: '', filterStatus: 'ANY' })).toMatchObject({ filterLanguages: [], filterStatus: [] });
    expect(loadConfig({ CCPIPE_FILTER_LANGUAGES: '' })).toMatchObject({ filterLanguages: ['eng'] }); // compose passes `${VAR:-}`
    expect(loadConfig({ CCPIPE_FILTER_LANGUAGES: 'eng,any' }).filterLanguages).toEqual(['eng', 'any']); // a list is a list
  });

  it('refuses a broker URL that is not amqp:// or amqps://, without repeating it (it carries the password)', () => {
    for (const bad of ['http://ccpipe:s3cret@rabbitmq:15672', 'https://ccpipe:s3cret@rabbitmq', 'localhost:5672']) {
      let err: unknown;
      try {
        loadConfig({ RABBITMQ_URL: bad });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toMatch(/--rabbitmq \/ RABBITMQ_URL: must be an amqp:\/\/ or amqps:\/\/ URL/);
      expect((err as ConfigError).message).not.toContain('s3cret');
    }
    expect(loadConfig({ RABBITMQ_URL: 'amqps://u:p@broker.example:5671/vh' }).rabbitmqUrl).toBe('amqps://u:p@broker.example:5671/vh');
    expect(loadConfig({ RABBITMQ_URL: 'AMQP://u:p@rabbitmq' }).rabbitmqUrl).toBe('AMQP://u:p@rabbitmq');
  });

  it('refuses language codes no record can carry (ISO 639-3 is what Common Crawl writes), suggesting the right one', () => {
    expect(loadConfig({ CCPIPE_FILTER_LANGUAGES: 'eng,deu,zul' }).filterLanguages).toEqual(['eng', 'deu', 'zul']);
    let err: unknown;
    try {
      loadConfig({ CCPIPE_FILTER_LANGUAGES: 'xx,en,ger,ENG' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([
      '--languages / CCPIPE_FILTER_LANGUAGES: "xx" is not an ISO 639-3 language code (three letters, as Common Crawl writes them: eng, deu, fra, …); ' +
        '"en" is not an ISO 639-3 code: Common Crawl writes "eng"; "ger" is not an ISO 639-3 code: Common Crawl writes "deu"; "ENG" must be written in lower case ("eng")',
    ]);
  });

  const problemsOf = (env: Record<string, string>, flags: Record<string, unknown> = {}): string[] => {
    try {
      loadConfig(env, flags);
    } catch (e) {
      expect(e).toMatchObject({ code: 'CCP_ERR_CONFIG' });
      return (e as ConfigError).problems;
    }
    return [];
  };

  it('takes the detected-mime, URL-exclusion and domain allow/deny filters from env vars and flags (unset: no rule)', () => {
    const none = loadConfig({});
    expect([none.filterMimesDetected, none.filterUrlRegexExclude, none.filterDomainsAllow, none.filterDomainsDeny]).toEqual([undefined, undefined, undefined, undefined]);
    const c = loadConfig(
      { CCPIPE_FILTER_MIMES_DETECTED: 'text/html, application/xhtml+xml', CCPIPE_FILTER_URL_REGEX_EXCLUDE: '\\.pdf$', CCPIPE_FILTER_DOMAINS_DENY: 'Spam.example., ads.example,spam.example' },
      { filterDomainsAllow: 'example.com,example.co.uk' },
    );
    expect(c.filterMimesDetected).toEqual(['text/html', 'application/xhtml+xml']);
    expect(c.filterUrlRegexExclude).toBe('\\.pdf$');
    expect(c.filterDomainsAllow).toEqual(['example.co.uk', 'example.com']); // sorted: order does not change the dataset's filter
    expect(c.filterDomainsDeny).toEqual(['ads.example', 'spam.example']); // lower-cased, trailing dot and duplicates gone
  });

  it('refuses a regex that does not compile, naming the flag and env var and the reason', () => {
    expect(problemsOf({ CCPIPE_FILTER_URL_REGEX: 'a(b' }, { filterUrlRegexExclude: '[z-a]' })).toEqual([
      expect.stringMatching(/^--url-regex \/ CCPIPE_FILTER_URL_REGEX: not a valid JavaScript regular expression \(Invalid regular expression: \/a\(b\/: Unterminated group\)$/),
      expect.stringMatching(/^--url-regex-exclude \/ CCPIPE_FILTER_URL_REGEX_EXCLUDE: not a valid JavaScript regular expression \(.*Range out of order/),
    ]);
  });

  it('refuses domain rule entries that could never match a registered domain, naming the one to write', () => {
    expect(problemsOf({ CCPIPE_FILTER_DOMAINS_ALLOW: 'www.example.com,co.uk' }, { filterDomainsDeny: 'https://spam.example.org/' })).toEqual([
      '--domains-allow / CCPIPE_FILTER_DOMAINS_ALLOW: "co.uk" is not a registered domain (a public suffix, or not a host name); "www.example.com" is not a registered domain: the rule compares registered domains, write "example.com"',
      '--domains-deny / CCPIPE_FILTER_DOMAINS_DENY: "https://spam.example.org/" is not a registered domain: the rule compares registered domains, write "example.org"',
    ]);
  });

  it('refuses an empty list for a list rule (it would drop every record); an empty env var is unset', () => {
    for (const key of ['filterMimes', 'filterMimesDetected', 'filterDomainsAllow', 'filterDomainsDeny']) {
      expect(problemsOf({}, { [key]: ' , ' })).toEqual([expect.stringContaining('expected at least one value')]);
    }
    expect(loadConfig({ CCPIPE_FILTER_DOMAINS_DENY: '', CCPIPE_FILTER_MIMES: '' })).toMatchObject({ filterDomainsDeny: undefined, filterMimes: undefined });
  });

  it('gives up on a refusing broker after 2 min by default; 0 keeps trying', () => {
    expect(loadConfig({}).brokerGiveUpMs).toBe(120_000);
    expect(loadConfig({ CCPIPE_BROKER_GIVE_UP_MS: '0' }).brokerGiveUpMs).toBe(0);
    expect(loadConfig({}, { brokerGiveUpMs: '1500' }).brokerGiveUpMs).toBe(1500);
    expect(() => loadConfig({ CCPIPE_BROKER_GIVE_UP_MS: '-1' })).toThrow(/--broker-give-up-ms \/ CCPIPE_BROKER_GIVE_UP_MS/);
  });

  it('reads yes/no settings strictly: a typo is refused instead of meaning yes', () => {
    for (const [v, want] of [['true', true], ['YES', true], ['1', true], ['on', true], ['false', false], ['No', false], ['0', false], [' off ', false]] as const) {
      expect(loadConfig({ CCPIPE_INCLUDE_TEXT: v }).includeText).toBe(want);
    }
    for (const bad of ['maybe', 'flase', 'nope', '2']) {
      expect(() => loadConfig({}, { includeText: bad })).toThrow(/--include-text \/ CCPIPE_INCLUDE_TEXT: expected true\/false/);
    }
  });

  it('reports every problem at once, naming flag and env var', () => {
    let err: unknown;
    try {
      loadConfig({ CCPIPE_BATCH_SIZE: 'many', RABBITMQ_URL: 'not a url' }, { crawl: '../etc' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(/--batch-size \/ CCPIPE_BATCH_SIZE/);
    expect(problems.join('\n')).toMatch(/--rabbitmq \/ RABBITMQ_URL/);
    expect(problems.join('\n')).toMatch(/--crawl \/ CCPIPE_CRAWL/);
  });

  it('documents every option with a distinct env var and flag', () => {
    const rows = describeOptions();
    expect(new Set(rows.map((r) => r.env)).size).toBe(rows.length);
    expect(new Set(rows.map((r) => r.flag)).size).toBe(rows.length);
    for (const r of rows) expect(r.doc.length).toBeGreaterThan(5);
  });

  it('says each default as loadConfig applies it, and none for options without one', () => {
    const byKey = new Map(describeOptions().map((r) => [r.key, r.default]));
    const loaded = loadConfig({}, {});
    expect(byKey.get('data')).toBe('./data');
    expect(byKey.get('apiHost')).toBe('0.0.0.0');
    expect(byKey.get('crawl')).toBeUndefined();
    for (const [key, d] of byKey) if (d !== undefined) expect({ key, d }).toEqual({ key, d: String(loaded[key]) });
  });
});
