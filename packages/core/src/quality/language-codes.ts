import { iso6393 } from 'iso-639-3';

/**
 * Individual languages → the ISO 639-3 macrolanguage Common Crawl writes for them. CC's CDX `languages` come from
 * CLD2, which reports macrolanguages (`zho`, `ara`, `fas`, `msa`, `nor`, ...), while trigram models such as franc are
 * trained per individual language (`cmn`, `arb`, `pes`, `zlm`, `nob`, ...). Covers the individual codes the supported
 * engines and the corpus labels can produce, not the whole ISO table. `ind` (Indonesian) stays itself: CLD2 reports it
 * apart from `msa`.
 */
export const MACROLANGUAGE_OF: Readonly<Record<string, string>> = {
  // Chinese
  cmn: 'zho', yue: 'zho', wuu: 'zho', hak: 'zho', nan: 'zho', gan: 'zho', hsn: 'zho', cjy: 'zho', cdo: 'zho',
  // Arabic
  arb: 'ara', ary: 'ara', arz: 'ara', apc: 'ara', ajp: 'ara', acm: 'ara', aeb: 'ara', arq: 'ara', ayl: 'ara', afb: 'ara',
  // Persian, Malay, Norwegian (Bokmål; Nynorsk `nno` is its own CLD2 language)
  pes: 'fas', prs: 'fas', zlm: 'msa', zsm: 'msa', nob: 'nor',
  // Estonian, Latvian, Albanian, Azerbaijani, Uzbek, Swahili, Mongolian, Nepali, Oriya, Pashto
  ekk: 'est', lvs: 'lav', als: 'sqi', aln: 'sqi', azj: 'aze', azb: 'aze', uzn: 'uzb', uzs: 'uzb', swh: 'swa', swc: 'swa',
  khk: 'mon', npi: 'nep', ory: 'ori', pbu: 'pus', pbt: 'pus', pst: 'pus',
  // Quechua, Kurdish, Yiddish, Guarani, Aymara, Malagasy, Oromo, Fula, Akan, Kanuri, Konkani, Punjabi (Western)
  quz: 'que', quy: 'que', qug: 'que', qub: 'que', kmr: 'kur', ckb: 'kur', sdh: 'kur', ydd: 'yid', yih: 'yid',
  gug: 'grn', gun: 'grn', ayr: 'aym', ayc: 'aym', plt: 'mlg', gaz: 'orm', hae: 'orm', fuv: 'ful', fuf: 'ful', ffm: 'ful',
  twi: 'aka', fat: 'aka', knc: 'kau', gom: 'kok', knn: 'kok', pnb: 'lah',
};

let alias: Map<string, string> | null = null;

function aliases(): Map<string, string> {
  if (alias !== null) return alias;
  alias = new Map();
  for (const l of iso6393) {
    alias.set(l.iso6393, l.iso6393);
    if (l.iso6391 !== undefined) alias.set(l.iso6391, l.iso6393);
    if (l.iso6392B !== undefined) alias.set(l.iso6392B, l.iso6393);
  }
  return alias;
}

/**
 * The ISO 639-3 code Common Crawl would write for `code` — an ISO 639-1 (`en`), 639-2/B (`ger`) or 639-3 (`cmn`)
 * code, or a BCP 47 tag whose primary subtag is one (`en-US`, `zh_Hant`) — folded into CC's macrolanguage
 * ({@link MACROLANGUAGE_OF}); null when it is no language code. Pure.
 */
export function toCcLanguageCode(code: string | null | undefined): string | null {
  if (!code) return null;
  const primary = code.trim().toLowerCase().split(/[-_]/)[0] ?? '';
  const c = aliases().get(primary);
  return c === undefined ? null : (MACROLANGUAGE_OF[c] ?? c);
}
