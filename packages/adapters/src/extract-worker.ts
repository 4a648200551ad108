// Worker-thread entry of ExtractionPool: extracts one document per message with extractDocument().
// The pool sends a worker its next document only after this one's reply, so every document runs in
// its own macrotask and the event loop turns in between: jsdom frees a closed window's memory only
// then (in a tight synchronous loop its heap grew to 4 GB).
import { parentPort, workerData } from 'node:worker_threads';
import { extractDocument, textQuality, wireErrorOf } from '@ccpipe/core';
import type { ExtractReady, ExtractReply, ExtractRequest, ExtractWorkerConfig, WireError } from './extract-messages';

const port = parentPort;
if (!port) throw new Error('extract-worker must run in a worker thread');
const config = workerData as ExtractWorkerConfig;

port.on('message', (req: ExtractRequest) => {
  let reply: ExtractReply;
  try {
    const result = extractDocument(req.html, { ...config.options, url: req.url });
    // the text's language and signals here, on the extraction thread (≈ 3% of the extraction's CPU): the worker's
    // filters then decide without holding its own thread
    result.quality = textQuality(result.text);
    reply = { id: req.id, ok: true, result };
  } catch (err) {
    reply = { id: req.id, ok: false, error: wireErrorOf(err) };
  }
  port.postMessage(reply);
});
const ready: ExtractReady = { ready: true };
port.postMessage(ready);
