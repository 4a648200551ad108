/**
 * Original text for the sample crawl, written for ccpipe: procedurally combined English sentences and a few short
 * hand-written passages in other languages. Nothing here comes from a third-party page.
 */

/** A small deterministic PRNG (mulberry32): the same seed always gives the same pages. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A stable numeric seed for a string. */
export function seedOf(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const SUBJECTS = [
  'The volunteers', 'Our small team', 'The harbour committee', 'A retired engineer', 'The local library', 'Most of the visitors',
  'The weather station', 'Every new member', 'The town council', 'A group of students', 'The bakery on the corner', 'Our reading circle',
];
const VERBS = [
  'spent the morning repairing', 'wrote a short guide about', 'asked the neighbours about', 'has been collecting notes on',
  'opened a second room for', 'kept a careful record of', 'talked for an hour about', 'finally agreed on a plan for',
  'started a weekly walk around', 'painted a new sign for',
];
const OBJECTS = [
  'the old stone bridge', 'the second-hand book stall', 'the rain gauge behind the school', 'the footpath along the river',
  'the winter timetable', 'the community garden', 'the lighthouse steps', 'the children\'s reading corner', 'the broken weather vane',
  'the market square', 'the rowing club boathouse', 'the orchard near the mill',
];
const TAILS = [
  'before the first frost arrived', 'with help from people who live nearby', 'and everyone seemed pleased with the result',
  'although the work took longer than expected', 'because nobody else had written it down', 'while the tide was still low',
  'so that visitors can find their way more easily', 'and the notes are kept in a folder at the front desk',
  'even though it rained for most of the afternoon', 'which should make next year a lot easier',
];
const CONNECTORS = ['In the end,', 'Later that week,', 'As usual,', 'On Saturday,', 'For the first time,', 'After some discussion,', 'Meanwhile,'];

/** One English sentence. */
export function englishSentence(r: () => number): string {
  const lead = r() < 0.35 ? `${pick(r, CONNECTORS)} ${pick(r, SUBJECTS).replace(/^The /, 'the ').replace(/^A /, 'a ').replace(/^Our /, 'our ').replace(/^Most /, 'most ').replace(/^Every /, 'every ')}` : pick(r, SUBJECTS);
  return `${lead} ${pick(r, VERBS)} ${pick(r, OBJECTS)}, ${pick(r, TAILS)}.`;
}

/** `n` English paragraphs of 3–5 sentences each. */
export function englishParagraphs(seed: string, n: number): string[] {
  const r = prng(seedOf(seed));
  return Array.from({ length: n }, () => Array.from({ length: 3 + Math.floor(r() * 3) }, () => englishSentence(r)).join(' '));
}

/** Short original passages in other languages (the default filter keeps only English, so these are dropped). */
export const FOREIGN: Record<'deu' | 'fra' | 'spa' | 'ita', string[]> = {
  deu: [
    'Unsere kleine Buchhandlung liegt direkt am Ufer des Sees. Jeden Samstag treffen sich hier Leserinnen und Leser, um über neue und alte Bücher zu sprechen.',
    'Im Winter öffnen wir erst am Mittag, weil die Straße am Morgen oft glatt ist. Wer ein bestimmtes Buch sucht, kann uns gerne vorher eine Nachricht schreiben.',
    'Die Kinderecke wurde im letzten Jahr von Freiwilligen neu gestrichen. Dort gibt es Bilderbücher, Spiele und einen großen Tisch zum Malen.',
  ],
  fra: [
    'Notre association propose des échanges de conversation chaque mardi soir dans la salle de la mairie. Les débutants sont toujours les bienvenus.',
    'Pendant les vacances, nous organisons des promenades dans la vieille ville et des ateliers de cuisine avec les familles du quartier.',
    'Pour participer, il suffit de venir avec un peu de curiosité et, si possible, un carnet pour noter les mots nouveaux.',
  ],
  spa: [
    'Nuestro grupo se reúne los jueves por la tarde en la biblioteca municipal para practicar la lengua y compartir recetas de cocina.',
    'Durante el verano hacemos excursiones al campo y visitamos los pueblos cercanos, donde siempre aprendemos algo nuevo sobre la historia local.',
    'Si quieres participar, escríbenos un mensaje y te enviaremos el calendario de actividades del próximo mes.',
  ],
  ita: [
    'Il nostro circolo si incontra ogni mercoledì sera nella sala accanto alla stazione per leggere insieme e parlare di libri.',
    'In primavera organizziamo passeggiate lungo il fiume e piccole feste nel giardino della scuola con musica e dolci fatti in casa.',
    'Chi desidera partecipare può venire senza prenotazione: basta portare un libro da consigliare agli altri.',
  ],
};
