import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

// jest's module cache refuses writes, so under jest loadLinkedom() gives the shared linkedom (`lean: false`). These run
// the compiled module in a child process, as the extraction threads do: `npx tsc -b` first.
const DIST = resolve(__dirname, '../../dist/extract');

function runChild(script: string): unknown {
  const run = spawnSync(process.execPath, ['-e', script], { timeout: 300_000, encoding: 'utf8', maxBuffer: 1 << 26 });
  expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
  return JSON.parse(run.stdout);
}

describe('loadLinkedom', () => {
  it('loads its own linkedom with the lean EventTarget and leaves require("linkedom") as published', () => {
    const r = runChild(`
      const { loadLinkedom } = require(${JSON.stringify(`${DIST}/lean-linkedom.js`)});
      const ours = loadLinkedom();
      const published = require(require.resolve('linkedom', { paths: [${JSON.stringify(DIST)}] }));
      const baseOf = (l) => Object.getPrototypeOf(l.parseHTML('<html><body></body></html>').document.body.constructor.prototype.constructor);
      const chain = (l) => { const names = []; for (let p = Object.getPrototypeOf(l.parseHTML('<html><body></body></html>').document.body); p; p = Object.getPrototypeOf(p)) names.push(p.constructor.name); return names; };
      process.stdout.write(JSON.stringify({ lean: ours.lean, again: loadLinkedom() === ours, distinct: ours.linkedom !== published,
        ours: chain(ours.linkedom), published: chain(published), base: baseOf(published) === baseOf(ours.linkedom) }));`) as Record<string, unknown>;
    expect(r).toMatchObject({ lean: true, again: true, distinct: true, base: false });
    expect(r.ours).toContain('LeanEventTarget');
    expect(r.published).toContain('DOMEventTarget');
    expect(r.published).not.toContain('LeanEventTarget');
  });

  it('dispatches events as linkedom does: target then ancestors, once, handleEvent, both stops, removal', () => {
    const r = runChild(`
      const { loadLinkedom } = require(${JSON.stringify(`${DIST}/lean-linkedom.js`)});
      const published = require(require.resolve('linkedom', { paths: [${JSON.stringify(DIST)}] }));
      function story(l) {
        const { document } = l.parseHTML('<html><body><div id="a"><p id="b">x</p></div></body></html>');
        const [a, b] = [document.getElementById('a'), document.getElementById('b')];
        const log = [];
        const onA = (e) => log.push('a' + e.eventPhase + (e.currentTarget === a) + (e.target === b));
        a.addEventListener('x', onA);
        b.addEventListener('x', function (e) { log.push('once' + e.eventPhase + (this === b)); }, { once: true });
        b.addEventListener('x', { handleEvent: (e) => log.push('h' + e.type) });
        log.push(b.dispatchEvent(new l.Event('x', { bubbles: true })));
        log.push(b.dispatchEvent(new l.Event('x')));
        b.addEventListener('y', (e) => { e.stopPropagation(); e.preventDefault(); log.push('stop'); });
        b.addEventListener('y', () => log.push('after stop'));
        a.addEventListener('y', () => log.push('a got y'));
        log.push(b.dispatchEvent(new l.Event('y', { bubbles: true })));
        b.addEventListener('z', (e) => { e.stopImmediatePropagation(); log.push('z1'); });
        b.addEventListener('z', () => log.push('z2'));
        b.dispatchEvent(new l.Event('z', { bubbles: true }));
        a.removeEventListener('x', onA);
        b.dispatchEvent(new l.Event('x', { bubbles: true }));
        b.click();
        return log;
      }
      process.stdout.write(JSON.stringify({ ours: story(loadLinkedom().linkedom), published: story(published) }));`) as {
      ours: unknown[];
      published: unknown[];
    };
    expect(r.ours).toEqual(r.published);
    expect(r.ours.length).toBeGreaterThan(8);
  });

  it('reads and writes class attributes as linkedom does, making class lists only when asked for', () => {
    const r = runChild(`
      const { loadLinkedom } = require(${JSON.stringify(`${DIST}/lean-linkedom.js`)});
      const published = require(require.resolve('linkedom', { paths: [${JSON.stringify(DIST)}] }));
      function story(l) {
        const { document } = l.parseHTML('<html><body><div class="  a\\tb  a\\u00a0c ">x</div><p class="one">y</p><i class="">z</i><b>w</b></body></html>');
        const [div, p, i, b] = ['div', 'p', 'i', 'b'].map((t) => document.querySelector(t));
        const log = [];
        const look = (el) => log.push([el.className, el.getAttribute('class'), el.getAttributeNode('class')?.value ?? null, el.hasAttribute('class'), el.outerHTML]);
        [div, p, i, b].forEach(look);
        log.push([...div.classList], div.classList.length, p.classList.contains('one'));
        b.className = ' x  y x ';
        look(b);
        log.push([...b.classList]);
        i.setAttribute('class', 'k\\nk  l');
        look(i);
        const clone = div.cloneNode(true);
        look(clone);
        clone.classList.add('d');
        look(clone);
        p.classList.remove('one');
        look(p);
        div.removeAttribute('class');
        look(div);
        div.className = 'again';
        look(div);
        const made = document.createElement('span');
        made.className = '';
        look(made);
        const q = document.createElement('q');
        q.setAttributeNode(clone.getAttributeNode('class').cloneNode());
        look(q);
        return log;
      }
      process.stdout.write(JSON.stringify({ ours: story(loadLinkedom().linkedom), published: story(published) }));`) as {
      ours: unknown[];
      published: unknown[];
    };
    expect(r.ours).toEqual(r.published);
    expect(r.ours[0]).toEqual(['a b c', 'a b c', 'a b c', true, '<div class="a b c">x</div>']);
  });
});
