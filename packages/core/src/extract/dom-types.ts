// The few DOM members extraction touches, typed structurally: core compiles without the DOM lib and
// both linkedom and jsdom satisfy these.

/** A DOM node, as far as extraction reads it. */
export interface DomNode {
  readonly nodeType: number;
  readonly firstChild: DomNode | null;
  readonly nextSibling: DomNode | null;
  readonly parentNode: DomNode | null;
  /** Text of a Text/CDATA node; null on elements in both DOMs. */
  readonly nodeValue: string | null;
  readonly textContent: string | null;
}

/** A DOM element, as far as extraction reads it. */
export interface DomElement extends DomNode {
  readonly localName: string;
  readonly firstElementChild: DomElement | null;
  readonly nextElementSibling: DomElement | null;
  getAttribute(name: string): string | null;
}

/** A DOM document, as far as extraction reads it. */
export interface DomDocument extends DomNode {
  readonly documentElement: DomElement | null;
  readonly body: DomElement | null;
  readonly title: string;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}

export const ELEMENT_NODE = 1;
export const TEXT_NODE = 3;
export const CDATA_SECTION_NODE = 4;
