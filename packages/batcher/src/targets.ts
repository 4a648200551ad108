import { readFile } from 'node:fs/promises';
import { CcpError, normalizeHost, registeredDomainOf, surtRangesForDomain, type SurtRange } from '@ccpipe/core';

/** A name the SURT ranges can hold: dot-separated labels of letters, digits, `-` and `_` (after IDNA), or an IP literal. */
const HOST = /^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*|\[[0-9a-f:.]+\])$/;

/**
 * A line of a targets file (`--domains`) that is not a registered domain or host. Names the file when known, the
 * line number and the line as written (shortened past 120 characters): it is the user's own file, not crawled data.
 */
export class TargetLineError extends CcpError {
  constructor(lineNo: number, text: string, source: string | undefined, cause?: unknown) {
    const shown = text.length > 120 ? `${text.slice(0, 117)}...` : text;
    const hint = text.includes('://') ? ' (a URL: write its host alone, e.g. example.com)' : ' (expected one registered domain or host per line, e.g. example.com or blog.example.co.uk)';
    super('CCP_ERR_DOMAINS_INVALID', `${source ?? '--domains'} line ${lineNo}: ${JSON.stringify(shown)} is not a registered domain or host${hint}`, {
      cause,
      detail: { line: lineNo, text: shown, ...(source === undefined ? {} : { file: source }) },
    });
  }
}

/**
 * The SURT key ranges a domain-targeted run covers, merged and sorted so membership is a binary search
 * (a targets file may hold hundreds of thousands of domains).
 */
export class TargetSet {
  readonly ranges: readonly SurtRange[];

  private constructor(ranges: SurtRange[]) {
    this.ranges = ranges;
  }

  /**
   * From lines of registered domains or hosts (blank lines and `#` comments skipped). A registered domain covers
   * itself and every subdomain; a host below a registered domain covers that host and its subdomains.
   * Throws {@link TargetLineError} (CCP_ERR_DOMAINS_INVALID) naming the first invalid line (number and text), and
   * `source` (the file) when given: a URL, a path, a wildcard or anything that is not a host would otherwise match
   * nothing, or the wrong thing, without a word.
   */
  static fromLines(lines: Iterable<string>, source?: string): TargetSet {
    const ranges: SurtRange[] = [];
    let lineNo = 0;
    for (const raw of lines) {
      lineNo++;
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      // normalizeHost keeps the part before a ':' and drops a path: `http://x/` would become the host `http`
      const host = /[/\\?#@\s]/.test(line) ? '' : normalizeHost(line);
      if (!HOST.test(host)) throw new TargetLineError(lineNo, line, source);
      try {
        ranges.push(...surtRangesForDomain(host, true));
      } catch (err) {
        throw new TargetLineError(lineNo, line, source, err);
      }
    }
    return new TargetSet(mergeRanges(ranges));
  }

  /**
   * From a targets file (`--domains`), as {@link fromLines}. Throws CcpError CCP_ERR_DOMAINS_FILE naming the file
   * when it cannot be read, TargetLineError for a bad line.
   */
  static async fromFile(file: string): Promise<TargetSet> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : `cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
      throw new CcpError('CCP_ERR_DOMAINS_FILE', `--domains file ${file} ${why}`, { cause: err, detail: { file } });
    }
    return TargetSet.fromLines(text.split('\n'), file);
  }

  /** Number of merged ranges. */
  get size(): number {
    return this.ranges.length;
  }

  /** True when a SURT key lies in a target range. O(log n). */
  has(surt: string): boolean {
    let lo = 0;
    let hi = this.ranges.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ranges[mid]!.end <= surt) lo = mid + 1;
      else hi = mid;
    }
    const r = this.ranges[lo];
    return r !== undefined && r.start <= surt && surt < r.end;
  }

  /** The key prefixes whose blocks must be read: each range is exactly the keys starting with its start. */
  prefixes(): string[] {
    return this.ranges.map((r) => r.start);
  }
}

function mergeRanges(ranges: SurtRange[]): SurtRange[] {
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: SurtRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) {
      if (r.end > last.end) out[out.length - 1] = { start: last.start, end: r.end };
    } else out.push({ ...r });
  }
  return out;
}

export { registeredDomainOf };
