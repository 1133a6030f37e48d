// Small DOM helpers the simulator page's modules share: lookup, element building, status lines.

export const $ = (selector) => document.querySelector(selector);

/** A DOM element with attributes and children (strings become text nodes, never HTML). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, String(value));
  }
  node.append(...children.filter((child) => child !== undefined && child !== null));
  return node;
}

/** `data-state` is what the styles and the browser test key on; the text is for people. */
export function setStatus(node, state, text) {
  node.dataset.state = state;
  node.textContent = text;
}
