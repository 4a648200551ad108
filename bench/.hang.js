const { parseHTML } = require('linkedom');
const { Readability } = require('@mozilla/readability');
const html = process.argv[2];
const { document } = parseHTML(html);
console.log('parsed body:', document.body && document.body.innerHTML);
const t = Date.now();
const r = new Readability(document).parse();
console.log('done', Date.now() - t, r && r.textContent);
