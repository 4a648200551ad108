import Module from 'node:module';
import { dirname, join, sep } from 'node:path';
import { installFastPaths, type LinkedomInternals } from './linkedom-fast-paths';
import { installTagCensus } from './tag-census';

/** The part of linkedom extraction uses. */
export interface LinkedomModule {
  parseHTML(html: string): { document: unknown };
}

/** linkedom as {@link loadLinkedom} loaded it. */
export interface LoadedLinkedom {
  linkedom: LinkedomModule;
  /**
   * True when this is extraction's own instance, with the lean EventTarget and the fast paths of linkedom-fast-paths;
   * false when the shared one was used as it is.
   */
  lean: boolean;
}

// Listener maps of the nodes that have listeners. linkedom's EventTarget gives every node a Map and a WeakMap entry
// in its constructor: 21 % of extraction's CPU time on the article benchmark, plus GC (ephemeron tables are costly to
// scan). Readability adds no listeners, so almost no node needs one.
const listenersOf = new WeakMap<object, Map<string, Map<unknown, unknown>>>();

const AT_TARGET = 2;
const BUBBLING_PHASE = 3;
const CAPTURING_PHASE = 1;
const NONE = 0;

/** What dispatching reads and writes on linkedom's Event. */
interface DispatchedEvent {
  type: string;
  bubbles: boolean;
  eventPhase: number;
  cancelBubble: boolean;
  defaultPrevented: boolean;
  _stopImmediatePropagationFlag: boolean;
  _path: Array<{ currentTarget: unknown; target: unknown }>;
  currentTarget?: unknown;
  target?: unknown;
}

type Listener = ((this: unknown, e: unknown) => void) | { handleEvent(e: unknown): void };

/**
 * linkedom's EventTarget with the same methods and dispatch (target, then ancestors while the event bubbles; `once`
 * listeners dropped before their call; `stopImmediatePropagation` ends the target's listeners, `stopPropagation` the
 * path), except that a node's listener map is made when its first listener is added, not when the node is.
 */
class LeanEventTarget {
  /** The next target of a bubbling event; nodes override it. */
  _getParent(): unknown {
    return null;
  }

  addEventListener(type: string, listener: Listener, options?: unknown): void {
    let byType = listenersOf.get(this);
    if (!byType) listenersOf.set(this, (byType = new Map()));
    let listeners = byType.get(type);
    if (!listeners) byType.set(type, (listeners = new Map()));
    listeners.set(listener, options);
  }

  removeEventListener(type: string, listener: Listener): void {
    const byType = listenersOf.get(this);
    const listeners = byType?.get(type);
    if (listeners?.delete(listener) && listeners.size === 0) byType!.delete(type);
  }

  dispatchEvent(event: DispatchedEvent): boolean {
    event.eventPhase = CAPTURING_PHASE;
    for (let node: unknown = this; node; ) {
      const n = node as Partial<LeanEventTarget>;
      if (n.dispatchEvent) event._path.push({ currentTarget: node, target: this });
      node = event.bubbles && n._getParent ? n._getParent() : null;
    }
    for (const step of event._path) {
      if (invokeListeners(event, step.currentTarget as object, step.target)) break;
    }
    event._path = [];
    event.eventPhase = NONE;
    return !event.defaultPrevented;
  }
}

/** Calls `currentTarget`'s listeners for `event`; true when propagation was stopped. */
function invokeListeners(event: DispatchedEvent, currentTarget: object, target: unknown): boolean {
  const listeners = listenersOf.get(currentTarget)?.get(event.type);
  if (!listeners) return false;
  event.eventPhase = currentTarget === target ? AT_TARGET : BUBBLING_PHASE;
  event.currentTarget = currentTarget;
  event.target = target;
  for (const [listener, options] of listeners) {
    if ((options as { once?: boolean } | undefined)?.once) listeners.delete(listener);
    if (typeof listener === 'function') (listener as (this: unknown, e: unknown) => void).call(target, event);
    else (listener as { handleEvent(e: unknown): void }).handleEvent(event);
    if (event._stopImmediatePropagationFlag) break;
  }
  delete event.currentTarget;
  delete event.target;
  return event.cancelBubble;
}

let loaded: LoadedLinkedom | undefined;

/**
 * linkedom for extraction: its own instance of linkedom's modules, loaded with {@link LeanEventTarget} in place of
 * linkedom's EventTarget (Node extends it, and a class's base cannot be swapped later without V8 losing its fast paths:
 * measured, that lost the whole gain), and with the accessors of linkedom-fast-paths. The module cache is left as it was, so another `require('linkedom')` in the
 * process gets linkedom as published. Where the module cache cannot be written (jest's), the shared linkedom is used as
 * it is (`lean: false`): same DOM, same results, slower. Loaded once per process or thread.
 */
export function loadLinkedom(): LoadedLinkedom {
  if (loaded) return loaded;
  const entry = require.resolve('linkedom');
  const root = dirname(entry) + sep; // linkedom/cjs/
  const cache = require.cache;
  const own = (k: string) => k.startsWith(root);
  let prior: Array<[string, NodeModule | undefined]> | undefined;
  try {
    prior = Object.keys(cache).filter(own).map((k) => [k, cache[k]]);
    for (const [k] of prior) delete cache[k];
    const file = join(root, 'interface', 'event-target.js');
    const stub = new Module(file);
    stub.filename = file;
    stub.loaded = true;
    stub.exports = { EventTarget: LeanEventTarget };
    cache[file] = stub;
  } catch {
    // jest's require.cache refuses writes
    if (prior) for (const [k, m] of prior) if (m && !cache[k]) cache[k] = m;
    loaded = { linkedom: require('linkedom') as LinkedomModule, lean: false };
    return loaded;
  }
  let lean: LinkedomModule | undefined;
  try {
    const linkedom = require(entry) as LinkedomModule;
    const internal = (path: string) => require(join(root, path)) as Record<string, unknown>;
    installFastPaths({
      symbols: internal('shared/symbols.js'),
      ParentNode: internal('mixin/parent-node.js').ParentNode,
      Element: internal('interface/element.js').Element,
      NodeList: internal('interface/node-list.js').NodeList,
      Attr: internal('interface/attr.js').Attr,
      setAttribute: internal('shared/attributes.js').setAttribute,
    } as unknown as LinkedomInternals);
    installTagCensus({
      HTMLDocument: internal('html/document.js').HTMLDocument as { prototype: object },
      Document: internal('interface/document.js').Document as { prototype: object },
      Element: internal('interface/element.js').Element as { prototype: object },
      ShadowRoot: internal('interface/shadow-root.js').ShadowRoot as { prototype: object },
    });
    lean = linkedom;
  } catch {
    // a linkedom whose files are not where 0.18.14 keeps them (the version pinned): the shared one, as it is
  } finally {
    for (const k of Object.keys(cache).filter(own)) delete cache[k];
    for (const [k, m] of prior) if (m) cache[k] = m;
  }
  loaded = lean !== undefined ? { linkedom: lean, lean: true } : { linkedom: require('linkedom') as LinkedomModule, lean: false };
  return loaded;
}
