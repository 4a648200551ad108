import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

// The census is installed on extraction's own linkedom only, which jest's module cache cannot load: the compiled
// modules run in a child process (`npx tsc -b` first), against linkedom as published.
const DIST = resolve(__dirname, '../../dist/extract');

describe('tag census', () => {
  it('gives every tag query the answer of linkedom as published, however elements came into the document', () => {
    const run = spawnSync(process.execPath, ['-e', `
      const { loadLinkedom } = require(${JSON.stringify(`${DIST}/lean-linkedom.js`)});
      const { adoptTagCensus } = require(${JSON.stringify(`${DIST}/tag-census.js`)});
      const published = require(require.resolve('linkedom', { paths: [${JSON.stringify(DIST)}] }));
      function story(l) {
        const page = '<html><head><title>t</title></head><body><div id="d"><p>a<b>b</b></p><svg><foreignObject><i>x</i></foreignObject></svg></div></body></html>';
        const { document } = l.parseHTML(page);
        const log = [];
        const d = document.getElementById('d');
        const ask = (label) => {
          for (const q of ['font', 'embed', 'b', 'B', 'i', 'p,font', 'span', 'q', 'u', 'em', 'foreignObject', 'FOREIGNOBJECT', 'foreignobject', 'svg', 'article', 'nav'])
            log.push([label, q, document.querySelectorAll(q).length, document.getElementsByTagName(q).length, d.querySelectorAll(q).length,
              d.getElementsByTagName(q).length, d.querySelector(q)?.localName ?? null, document.querySelector(q)?.localName ?? null]);
        };
        ask('parsed');
        d.appendChild(document.createElement('FONT'));
        ask('created');
        d.firstElementChild.innerHTML = '<embed src="x"><span>s</span>';
        ask('innerHTML');
        d.appendChild(d.firstElementChild.cloneNode(true));
        ask('cloned');
        const other = l.parseHTML('<html><body><q>q</q><u><em>e</em></u></body></html>').document;
        adoptTagCensus(document, other);
        d.appendChild(other.body.firstElementChild);
        const u = other.body.firstElementChild;
        d.appendChild(u);
        u.appendChild(document.createElement('article'));
        log.push(['moved', u.querySelectorAll('article').length, u.getElementsByTagName('em').length]);
        ask('moved');
        d.appendChild(document.importNode(l.parseHTML('<html><body><nav>n</nav></body></html>').document.body.firstElementChild, true));
        ask('imported');
        const fresh = l.parseHTML('<html><body><div id="o"></div></body></html>').document;
        fresh.getElementById('o').outerHTML = '<section><h5>h</h5></section>';
        fresh.body.insertAdjacentHTML('beforeend', '<aside>a</aside>');
        log.push(['outer', fresh.querySelectorAll('section,h5,aside').length, fresh.getElementsByTagName('h5').length]);
        return log;
      }
      process.stdout.write(JSON.stringify({ lean: loadLinkedom().lean, ours: story(loadLinkedom().linkedom), published: story(published) }));`],
    { timeout: 300_000, encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    const r = JSON.parse(run.stdout) as { lean: boolean; ours: unknown[]; published: unknown[] };
    expect(r.lean).toBe(true);
    expect(r.ours).toEqual(r.published);
    expect(r.ours).toContainEqual(['moved', 1, 1]);
    expect(r.ours).toContainEqual(['outer', 3, 1]);
  });
});
