import { z } from 'zod';
import { FormatError } from '../errors';

function compiles(src: string): boolean {
  try {
    new RegExp(src);
    return true;
  } catch {
    return false;
  }
}

const regexSource = z.string().min(1).refine(compiles, { message: 'not a valid JavaScript regular expression' });
const domainList = z.array(z.string().min(1).transform((d) => d.trim().toLowerCase().replace(/\.$/, '')));

/**
 * Declarative record filter. Defaults keep what Common Crawl calls a good English capture:
 * `status: ['200']`, `languages: {mode: 'contains', codes: ['eng']}`. `status: null` and `languages: null` turn
 * those rules off; an omitted list rule (`mimes`, `mimeDetected`, domains) is off, an empty list drops everything.
 * Domains are registered domains (e.g. `example.co.uk`), compared lower-cased.
 */
export const FilterSpec = z.object({
  /** HTTP statuses to keep, as CC writes them ("200"). */
  status: z.array(z.string().min(1)).nullable().default(['200']),
  /** `contains`: any of the record's languages is listed; `primary`: its first one is. */
  languages: z
    .object({ mode: z.enum(['contains', 'primary']), codes: z.array(z.string().min(1)).min(1) })
    .nullable()
    .default({ mode: 'contains', codes: ['eng'] }),
  /** Keep only these `mime` values (the server's Content-Type, as CC records it). */
  mimes: z.array(z.string().min(1)).optional(),
  /** Keep only these `mime-detected` values. */
  mimeDetected: z.array(z.string().min(1)).optional(),
  /** Keep only URLs this matches (JavaScript RegExp source, no flags). */
  urlRegex: regexSource.optional(),
  /** Drop URLs this matches. */
  urlRegexExclude: regexSource.optional(),
  /** Keep only records whose registered domain is listed. */
  domainsAllow: domainList.optional(),
  /** Drop records whose registered domain is listed. */
  domainsDeny: domainList.optional(),
}).strict();

/** A validated filter spec (defaults applied). */
export type FilterSpec = z.output<typeof FilterSpec>;
/** What a caller may write (defaults optional). */
export type FilterSpecInput = z.input<typeof FilterSpec>;

/** Error code of an invalid filter spec. */
export const FILTER_SPEC_ERROR = 'CCP_ERR_FILTER_SPEC';

/**
 * Validates a filter spec and applies defaults.
 * @throws FormatError `CCP_ERR_FILTER_SPEC` listing every problem at once in `detail.issues`
 *   (`path: message` strings). Pure and idempotent.
 */
export function parseFilterSpec(input: unknown): FilterSpec {
  const r = FilterSpec.safeParse(input ?? {});
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  throw new FormatError(FILTER_SPEC_ERROR, `invalid filter spec (${issues.length} problem${issues.length === 1 ? '' : 's'})`, {
    detail: { issues },
  });
}
