import type { CdxLineGate } from '../cdx/cdx-block';
import type { CdxRecord } from '../cdx/cdx-line';
import { FormatError } from '../errors';
import { parseFilterSpec, type FilterSpecInput } from './filter-spec';
import { lineGateOf } from './line-gate';

/** Why a record was dropped. A small closed set, safe as a metric label; rules are checked in this order. */
export const DROP_REASONS = ['status', 'language', 'mime', 'mime_detected', 'url_pattern', 'domain_deny', 'domain_allow'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** Outcome of a filter on one record. */
export type FilterDecision = { readonly keep: true } | { readonly keep: false; readonly reason: DropReason };

/**
 * A compiled filter: pure, allocation-free per call (decisions are shared frozen objects). `lineGate`, when set, is
 * the part of it a block parser can decide on a line's bytes before making the record (see {@link CdxLineGate}):
 * it drops a line only for the reason the filter would give its record.
 */
export type RecordFilter = ((rec: CdxRecord) => FilterDecision) & { readonly lineGate?: CdxLineGate | undefined };

/** What the domain rules need: the registered domain (eTLD+1) of a URL, or null when it has none (IPs…). */
export interface FilterDeps {
  registeredDomainOf?: (url: string) => string | null;
}

const KEEP: FilterDecision = Object.freeze({ keep: true });
const DROP = Object.fromEntries(DROP_REASONS.map((r) => [r, Object.freeze({ keep: false, reason: r })])) as Record<
  DropReason,
  FilterDecision
>;

type Rule = (rec: CdxRecord) => boolean;

function listRule(values: readonly string[], get: (rec: CdxRecord) => string | undefined): Rule {
  if (values.length === 1) {
    const only = values[0];
    return (rec) => get(rec) === only;
  }
  const set = new Set(values);
  return (rec) => {
    const v = get(rec);
    return v !== undefined && set.has(v);
  };
}

/**
 * Compiles a filter spec (validated with defaults applied, see {@link parseFilterSpec}) into a function
 * returning `{keep: true}` or `{keep: false, reason}`. Rules run in {@link DROP_REASONS} order and the first
 * that fails names the reason, so per-reason counts add up to the drops. A record without `status`/`mime`/
 * `mime-detected` fails the matching rule; without languages it fails the language rule; a URL without a
 * registered domain fails `domainsAllow` and passes `domainsDeny`. Regexes and sets are built once. The function
 * carries its `lineGate` (status, language and mime rules on raw bytes) when the spec has any of those rules.
 * @throws FormatError `CCP_ERR_FILTER_SPEC` when the spec is invalid, or when it has domain rules and
 *   `deps.registeredDomainOf` is missing.
 */
export function compileFilter(spec: FilterSpecInput, deps: FilterDeps = {}): RecordFilter {
  const s = parseFilterSpec(spec);
  const rules: Array<[Rule, FilterDecision]> = [];
  if (s.status !== null) rules.push([listRule(s.status, (r) => r.status), DROP.status]);
  if (s.languages !== null) {
    const codes = s.languages.codes;
    const set = new Set(codes);
    const one = codes.length === 1 ? codes[0] : undefined;
    let rule: Rule;
    if (s.languages.mode === 'primary') {
      rule = one !== undefined ? (r) => r.languages[0] === one : (r) => r.languages.length > 0 && set.has(r.languages[0]!);
    } else if (one !== undefined) {
      rule = (r) => r.languages.includes(one);
    } else {
      rule = (r) => r.languages.some((l) => set.has(l));
    }
    rules.push([rule, DROP.language]);
  }
  if (s.mimes) rules.push([listRule(s.mimes, (r) => r.mime), DROP.mime]);
  if (s.mimeDetected) rules.push([listRule(s.mimeDetected, (r) => r.mimeDetected), DROP.mime_detected]);
  if (s.urlRegex !== undefined || s.urlRegexExclude !== undefined) {
    const inc = s.urlRegex !== undefined ? new RegExp(s.urlRegex) : undefined;
    const exc = s.urlRegexExclude !== undefined ? new RegExp(s.urlRegexExclude) : undefined;
    rules.push([(r) => (inc === undefined || inc.test(r.url)) && (exc === undefined || !exc.test(r.url)), DROP.url_pattern]);
  }
  let domainRule: ((rec: CdxRecord) => FilterDecision | undefined) | undefined;
  if (s.domainsDeny || s.domainsAllow) {
    const domainOf = deps.registeredDomainOf;
    if (!domainOf) {
      throw new FormatError('CCP_ERR_FILTER_SPEC', 'domain rules need a registeredDomainOf dependency');
    }
    const deny = s.domainsDeny ? new Set(s.domainsDeny) : undefined;
    const allow = s.domainsAllow ? new Set(s.domainsAllow) : undefined;
    // One domain lookup per record serves both rules, hence a rule that picks its own reason.
    domainRule = (r) => {
      const raw = domainOf(r.url);
      const d = raw === null ? null : raw.toLowerCase();
      if (deny && d !== null && deny.has(d)) return DROP.domain_deny;
      if (allow && (d === null || !allow.has(d))) return DROP.domain_allow;
      return undefined;
    };
  }
  const n = rules.length;
  const tests = rules.map((r) => r[0]);
  const drops = rules.map((r) => r[1]);
  const lookup = domainRule;
  const filter: (rec: CdxRecord) => FilterDecision = lookup === undefined
    ? (rec) => {
      for (let i = 0; i < n; i++) if (!tests[i]!(rec)) return drops[i]!;
      return KEEP;
    }
    : (rec) => {
      for (let i = 0; i < n; i++) if (!tests[i]!(rec)) return drops[i]!;
      return lookup(rec) ?? KEEP;
    };
  const lineGate = lineGateOf(s);
  return lineGate === undefined ? filter : Object.assign(filter, { lineGate });
}
