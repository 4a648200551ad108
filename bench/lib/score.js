'use strict';
// Scoring of the scrapinghub article-extraction-benchmark (evaluate.py, commit 7d95432), replicated:
// tokens are Python `\w+` runs (letters, digits, underscore), 4-token shingles are counted as
// multisets, per-document TP/FP/FN are normalised to sum 1 so long texts do not weigh more,
// precision and recall are means over documents (skipping undefined ones), and F1 is the harmonic
// mean of those two means (not the mean of per-document F1s). Accuracy = token lists equal.

const TOKEN_RE = /[\p{L}\p{N}_]+/gu;

/** Python-compatible `re.findall(r'\w+', text)` (\w = isalnum() or underscore, marks excluded). */
function tokenize(text) {
  return (text || '').match(TOKEN_RE) || [];
}

function shingles(text, n) {
  const tokens = tokenize(text);
  const counts = new Map();
  const last = Math.max(1, tokens.length - n + 1);
  for (let i = 0; i < last; i++) {
    const s = tokens.slice(i, i + n);
    if (s.length === 0) continue;
    const key = s.join('\u0000');
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  return counts;
}

/** Normalised [tp, fp, fn] of one document, like evaluate.py's string_shingle_matching. */
function shingleMatch(truth, pred, n = 4) {
  const t = shingles(truth, n);
  const p = shingles(pred, n);
  let tp = 0, fp = 0, fn = 0;
  for (const [k, tc] of t) {
    const pc = p.get(k) || 0;
    tp += Math.min(tc, pc);
    fn += Math.max(0, tc - pc);
  }
  for (const [k, pc] of p) {
    const tc = t.get(k) || 0;
    fp += Math.max(0, pc - tc);
  }
  const s = tp + fp + fn;
  return s > 0 ? [tp / s, fp / s, fn / s] : [tp, fp, fn];
}

function precisionScore(tp, fp, fn) {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fp === 0) return 0;
  return tp / (tp + fp);
}

function recallScore(tp, fp, fn) {
  if (fp === 0 && fn === 0) return 1;
  if (tp === 0 && fn === 0) return 0;
  return tp / (tp + fn);
}

const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * Scores predictions against ground truth, both `{id: text}`. Every truth id must be predicted
 * (a missing prediction counts as empty text, as a failed extraction should).
 * @returns {{f1:number, precision:number, recall:number, accuracy:number, n:number}}
 */
function scoreAll(truthById, predById) {
  const triples = [];
  const acc = [];
  for (const id of Object.keys(truthById)) {
    const truth = truthById[id] || '';
    const pred = predById[id] || '';
    triples.push(shingleMatch(truth, pred));
    const a = tokenize(truth), b = tokenize(pred);
    acc.push(a.length === b.length && a.every((x, i) => x === b[i]) ? 1 : 0);
  }
  const precision = mean(triples.filter(([tp, fp]) => tp + fp > 0).map((t) => precisionScore(...t)));
  const recall = mean(triples.filter(([tp, , fn]) => tp + fn > 0).map((t) => recallScore(...t)));
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { f1, precision, recall, accuracy: mean(acc), n: triples.length };
}

module.exports = { tokenize, shingleMatch, scoreAll };
