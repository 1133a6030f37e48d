// Small DOM helpers the simulator page's modules share: lookup, element building, status lines, posting a run.

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

/**
 * A run posted to the server: `body` as JSON to `path`, `status` telling how it goes. Returns the answer, or
 * undefined when it failed (the status says why) or when a newer run began meanwhile (`isLatest` says no): a slower,
 * older run must not overwrite a newer one.
 */
export async function postRun(path, body, status, isLatest) {
  setStatus(status, 'running', 'Simulating…');
  let response;
  let answer;
  try {
    response = await fetch(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    answer = await response.json();
  } catch (error) {
    if (isLatest()) setStatus(status, 'error', `The server could not be reached: ${error.message}`);
    return undefined;
  }
  if (!isLatest()) return undefined;
  if (!response.ok) {
    setStatus(status, 'error', `${answer.error} (${answer.code})`);
    return undefined;
  }
  return answer;
}
