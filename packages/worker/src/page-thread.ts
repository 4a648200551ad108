// The worker's extraction thread (an ExtractionPool `workerPath`): besides a decoded page ({html, url}, as the pool's
// own script), it takes a WARC record's bytes and does everything from there to the extracted text — gzip, WARC and
// HTTP parsing, charset decoding, Readability, the text's quality signals — so the worker's main thread only fetches,
// builds rows and writes parts, and the decoded page never exists on it (issue #25: it was decoded there and copied
// over, 4 to 8 times the bytes of the compressed record, and left as garbage in the main thread's heap).
// One message per document, as in the pool's own script: the event loop turns between documents.
import { parentPort, workerData } from 'node:worker_threads';
import { errorCode, extractDocument, textQuality, wireErrorOf, type Extracted } from '@ccpipe/core';
import type { ExtractReady, ExtractReply, ExtractWorkerConfig, WireError } from '@ccpipe/adapters';
import { readPage } from './read-page';
import type { PageResult, PageRequest } from './page-pool';

const port = parentPort;
if (!port) throw new Error('page-thread must run in a worker thread');
const config = workerData as ExtractWorkerConfig;

/** extractDocument with the pool's options, and the text's language and signals (≈ 3% of the extraction's CPU). */
function extract(html: string, url: string): Extracted {
  const result = extractDocument(html, { ...config.options, url });
  result.quality = textQuality(result.text);
  return result;
}

/** A record's page: never fails (an unreadable record and an extraction failure are answers). */
function page(req: PageRequest): PageResult {
  let facts;
  try {
    facts = readPage(req.record, req.rec, true);
  } catch (err) {
    return { warc: errorCode(err) };
  }
  const { decoded, ...rest } = facts;
  // an HTML page's decoded text stays here: only what it yields goes back
  const out: PageResult = { facts: { ...rest, charset: decoded?.charset ?? null, text: decoded !== null && !facts.html ? decoded.text : null }, extracted: null, extractError: null };
  if (decoded !== null && facts.html) {
    try {
      out.extracted = extract(decoded.text, req.url);
    } catch (err) {
      out.extractError = wireErrorOf(err);
    }
  }
  return out;
}

port.on('message', (req: (PageRequest & { id: number }) | { id: number; html: string; url: string }) => {
  let reply: ExtractReply<Extracted | PageResult>;
  if ('record' in req) reply = { id: req.id, ok: true, result: page(req) };
  else {
    try {
      reply = { id: req.id, ok: true, result: extract(req.html, req.url) };
    } catch (err) {
      reply = { id: req.id, ok: false, error: wireErrorOf(err) };
    }
  }
  port.postMessage(reply);
});
const ready: ExtractReady = { ready: true };
port.postMessage(ready);
