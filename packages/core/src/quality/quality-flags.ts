import { QUALITY_FILTERS, QUALITY_FILTER_NAMES, QualityConfigError, qualityConfig, type QualityConfig, type QualityFilterName, type QualityThresholds } from './filters';

/** Named sets of filters: each paper's (or pipeline's) rules, and every rule. */
export const QUALITY_PRESETS: Readonly<Record<string, readonly QualityFilterName[]>> = {
  gopher: ['duplicate-lines', 'top-ngrams', 'duplicate-ngrams', 'min-words', 'max-words', 'mean-word-length', 'symbol-ratio', 'bullet-lines', 'ellipsis-lines', 'alpha-words', 'stop-words'],
  c4: ['lorem-ipsum', 'curly-bracket', 'min-sentences'],
  fineweb: ['line-punctuation', 'short-lines', 'duplicate-line-chars', 'list-lines'],
  all: QUALITY_FILTER_NAMES,
};

/**
 * Reads `--quality-thresholds` / CCPIPE_QUALITY_THRESHOLDS: `name=value` entries separated by `;`, a name being a
 * threshold flag without its dashes (`min-words=100;text-languages=eng,deu`). Pure.
 * @throws QualityConfigError on an entry without `=`
 */
export function parseQualityThresholds(spec: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of (spec ?? '').split(';').map((e) => e.trim()).filter(Boolean)) {
    const at = entry.indexOf('=');
    if (at <= 0) throw new QualityConfigError(`quality threshold "${entry}" is not name=value (e.g. min-words=100)`, { entry });
    out[entry.slice(0, at).trim().replace(/^--/, '')] = entry.slice(at + 1).trim();
  }
  return out;
}

/**
 * The quality configuration that flags ask for: `filters` names filters and presets ({@link QUALITY_PRESETS}; `none`
 * or nothing: none), `thresholds` sets thresholds by flag name (without dashes), and a threshold given turns its
 * filter on (`--min-words 100` runs min-words). Every problem is reported at once. Pure.
 * @throws QualityConfigError naming each unknown filter or threshold and each bad value
 */
export function qualityConfigOf(filters: readonly string[], thresholds: Readonly<Record<string, string>>): QualityConfig {
  const problems: string[] = [];
  const enable = new Set<string>();
  for (const f of filters.map((x) => x.trim()).filter((x) => x !== '' && x !== 'none')) {
    const preset = QUALITY_PRESETS[f];
    if (preset !== undefined) preset.forEach((n) => enable.add(n));
    else enable.add(f); // an unknown name is reported by qualityConfig
  }
  const values: Partial<Record<keyof QualityThresholds, unknown>> = {};
  for (const [name, raw] of Object.entries(thresholds)) {
    const owner = QUALITY_FILTERS.find((f) => f.params.some((p) => p.flag === `--${name}`));
    const param = owner?.params.find((p) => p.flag === `--${name}`);
    if (owner === undefined || param === undefined) {
      problems.push(`unknown quality threshold "${name}" (known: ${QUALITY_FILTERS.flatMap((f) => f.params.map((p) => p.flag.slice(2))).join(', ')})`);
      continue;
    }
    enable.add(owner.name);
    const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
    if (param.kind === 'languages') values[param.key] = list;
    else if (param.kind === 'numbers') values[param.key] = list.map(Number);
    else if (list.length !== 1 || raw.trim() === '') problems.push(`--${name} takes one number`);
    else values[param.key] = Number(raw);
  }
  try {
    const config = qualityConfig({ enable, thresholds: values as Partial<QualityThresholds> });
    if (problems.length === 0) return config;
  } catch (err) {
    if (!(err instanceof QualityConfigError)) throw err;
    problems.push(err.message);
  }
  throw new QualityConfigError(problems.join('; '), { problems });
}
