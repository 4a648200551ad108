#!/usr/bin/env node
'use strict';
const cli = require('../dist/main.js');
cli.main(process.argv).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(cli.describeCliError(err, process.env.LOG_LEVEL)); process.exitCode = 1; },
);
