/**
 * The domain view's chart in the client script: one column per crawl, its height the crawl's URL count, split by
 * the crawl's status mix (`status_classes`) when the version has facts. Plain SVG built with createElementNS, sized
 * to its box in CSS pixels (redrawn on resize) so its text stays readable at 400 px; the crawl table beside it holds
 * the same numbers for screen readers and keyboard users.
 */
export const EXPLORER_CHART_SCRIPT = String.raw`
// ---- chart: URLs per crawl, status mix per crawl ----
const CHART_H = 190;
const PAD = { top: 20, right: 8, bottom: 28, left: 8 };

/** The label under a column: Common Crawl's names lose their shared prefix (CC-MAIN-2024-30 → 2024-30). */
const shortName = (name) => String(name).replace(/^CC-MAIN-/, '');

function drawChart(d, s) {
  const box = $('chart-plot');
  const withFacts = d.datasets.some((ds) => ds.status_classes);
  $('chart-caption').textContent = withFacts ? 'URLs per crawl, coloured by HTTP status mix' : 'URLs per crawl';
  const width = Math.max(240, Math.floor(box.getBoundingClientRect().width || box.parentElement.getBoundingClientRect().width || 600));
  const n = Math.max(1, d.datasets.length);
  const slot = (width - PAD.left - PAD.right) / n;
  const barW = Math.max(2, Math.min(64, slot * 0.64));
  const max = Math.max(1, ...d.datasets.map((ds) => ds.url_count));
  const plotH = CHART_H - PAD.top - PAD.bottom;
  // label every k-th column only when they would overlap (about 60 px per label)
  const every = Math.max(1, Math.ceil(60 / slot));
  // role=img hides the columns' titles from screen readers: the label carries the same numbers in one sentence
  const summary = $('chart-caption').textContent + ': ' + d.datasets.map((ds) => nameOf(ds) + ' ' + plural(ds.url_count, 'URL', 'URLs') + mixTitle(ds)).join('; ');
  const root = svg('svg', {
    width, height: CHART_H, viewBox: '0 0 ' + width + ' ' + CHART_H, role: 'img', 'aria-label': summary, class: 'bars',
  });
  root.append(svg('line', { x1: PAD.left, x2: width - PAD.right, y1: CHART_H - PAD.bottom + 0.5, y2: CHART_H - PAD.bottom + 0.5, class: 'axis' }));
  d.datasets.forEach((ds, i) => {
    const x = PAD.left + i * slot + (slot - barW) / 2;
    const h = Math.max(1, Math.round((ds.url_count / max) * plotH));
    const base = CHART_H - PAD.bottom;
    const g = svg('g', {
      class: 'bar-group' + (ds.dataset_id === s.dataset ? ' selected' : ''), 'data-dataset-id': ds.dataset_id, 'data-url-count': ds.url_count,
    }, svg('title', null, nameOf(ds) + ': ' + plural(ds.url_count, 'URL', 'URLs') + mixTitle(ds)));
    const classes = ds.status_classes || null;
    const sum = classes ? STATUS_CLASSES.reduce((a, k) => a + (Number(classes[k]) || 0), 0) : 0;
    if (classes && sum > 0) {
      // the column's height is the URL count; its segments split it in the proportions of the status classes
      let y = base;
      for (const k of STATUS_CLASSES) {
        const count = Number(classes[k]) || 0;
        if (count === 0) continue;
        const sh = (count / sum) * h;
        y -= sh;
        g.append(svg('rect', { x, y, width: barW, height: sh, class: 'seg s' + k, 'data-class': k, 'data-count': count }));
      }
    } else {
      g.append(svg('rect', { x, y: base - h, width: barW, height: h, class: 'bar' }));
    }
    g.append(svg('text', { x: x + barW / 2, y: base - h - 5, class: 'count', 'text-anchor': 'middle' }, NF.format(ds.url_count)));
    if (i % every === 0) g.append(svg('text', { x: x + barW / 2, y: CHART_H - 9, class: 'label', 'text-anchor': 'middle' }, shortName(nameOf(ds))));
    g.addEventListener('click', () => go(domainState(d.domain, { dataset: ds.dataset_id })));
    root.append(g);
  });
  box.replaceChildren(root);
  const legend = $('chart-legend');
  legend.hidden = !withFacts;
  legend.replaceChildren(...(withFacts ? STATUS_CLASSES.map((k) => el('span', { class: 'key' }, el('span', { class: 'swatch s' + k, 'aria-hidden': 'true' }), k)) : []));
}

function mixTitle(ds) {
  if (!ds.status_classes) return '';
  const parts = STATUS_CLASSES.filter((k) => ds.status_classes[k] > 0).map((k) => k + ' ' + NF.format(ds.status_classes[k]));
  return parts.length ? ' (' + parts.join(', ') + ')' : '';
}

// the chart is drawn in CSS pixels: redraw it when its box changes width
let chartTimer = null;
window.addEventListener('resize', () => {
  clearTimeout(chartTimer);
  chartTimer = setTimeout(() => {
    if (!sections.domain.hidden && current) drawChart(current.body, readState());
  }, 150);
});
`;
