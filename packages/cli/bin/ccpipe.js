#!/usr/bin/env node
'use strict';
require('../dist/main.js').main(process.argv).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err && err.stack ? err.stack : err); process.exitCode = 1; },
);
