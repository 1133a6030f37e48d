// The scenario form: the policy cards, the traffic pattern's and request duration's fields, read into a POST body.
import { LOCKOUT_DEFAULT, PATTERNS, POLICY_KINDS, SERVICE_KINDS } from './choices.js';
import { $, el } from './dom.js';

/**
 * The policy cards as typed, keyed by option, so a card switched between window kinds keeps its limit and window;
 * `lockout` is the card's lockout tickbox and `blockMs` its length as typed.
 */
const policies = [
  { kind: 'fixed-window', values: {}, lockout: false, blockMs: LOCKOUT_DEFAULT },
  { kind: 'sliding-window', values: {}, lockout: false, blockMs: LOCKOUT_DEFAULT },
  { kind: 'token-bucket', values: {}, lockout: false, blockMs: LOCKOUT_DEFAULT },
];

/** Form text to JSON as typed: numbers stay numbers, anything else goes as a string for the library to judge. */
function jsonValue(raw) {
  const text = raw.trim();
  if (text === '') return undefined;
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

export function renderPolicies() {
  const list = $('#policy-list');
  list.replaceChildren(
    ...policies.map((policy, i) => {
      const kindSelect = el(
        'select',
        { 'data-testid': `policy-${i}-kind` },
        ...Object.entries(POLICY_KINDS).map(([kind, { label }]) =>
          el('option', { value: kind, selected: kind === policy.kind }, label),
        ),
      );
      kindSelect.addEventListener('change', () => {
        policy.kind = kindSelect.value;
        renderPolicies();
      });
      const remove = el(
        'button',
        {
          type: 'button',
          class: 'icon',
          'data-testid': `policy-${i}-remove`,
          'aria-label': `Remove policy ${i + 1}`,
          title: 'Remove',
          disabled: policies.length <= 2,
        },
        '×',
      );
      remove.addEventListener('click', () => {
        policies.splice(i, 1);
        renderPolicies();
      });
      const fields = POLICY_KINDS[policy.kind].fields.map(([option, label, fallback]) => {
        const input = el('input', {
          'data-testid': `policy-${i}-${option}`,
          value: policy.values[option] ?? fallback,
        });
        input.addEventListener('input', () => {
          policy.values[option] = input.value;
        });
        return el('label', { class: 'field' }, el('span', {}, label), input);
      });
      return el(
        'div',
        { class: 'policy-card', 'data-testid': `policy-${i}` },
        el('div', { class: 'policy-head' }, el('strong', {}, `Policy ${i + 1}`), remove),
        el('label', { class: 'field' }, el('span', {}, 'Algorithm'), kindSelect),
        ...fields,
        lockoutFields(policy, i),
      );
    }),
  );
  $('#add-policy').disabled = policies.length >= 4;
  // Only a leased policy (a concurrency limit) holds a request for its duration.
  $('#service').hidden = !policies.some((policy) => POLICY_KINDS[policy.kind].leased);
}

/** The card's lockout: a tickbox, and its length, typed only while ticked. */
function lockoutFields(policy, i) {
  const toggle = el('input', {
    type: 'checkbox',
    'data-testid': `policy-${i}-lockout`,
    checked: policy.lockout,
  });
  const length = el('input', {
    'data-testid': `policy-${i}-blockMs`,
    'aria-label': `Policy ${i + 1} lockout length`,
    value: policy.blockMs,
    disabled: !policy.lockout,
  });
  toggle.addEventListener('change', () => {
    policy.lockout = toggle.checked;
    length.disabled = !toggle.checked;
  });
  length.addEventListener('input', () => {
    policy.blockMs = length.value;
  });
  return el(
    'div',
    { class: 'field lockout' },
    el('label', { class: 'check' }, toggle, el('span', {}, 'Lock out after a denial for (ms or 10s)')),
    length,
  );
}

export function addPolicy() {
  policies.push({ kind: 'sliding-window-counter', values: {}, lockout: false, blockMs: LOCKOUT_DEFAULT });
  renderPolicies();
}

function policySpec(policy) {
  const spec = { kind: policy.kind };
  for (const [option, , fallback] of POLICY_KINDS[policy.kind].fields) {
    const value = jsonValue(policy.values[option] ?? fallback);
    if (value !== undefined) spec[option] = value;
  }
  if (policy.lockout) spec.blockMs = jsonValue(policy.blockMs) ?? '';
  return spec;
}

export function renderServiceKinds() {
  $('#service-kind').replaceChildren(
    ...Object.entries(SERVICE_KINDS).map(([kind, { label }]) => el('option', { value: kind }, label)),
  );
}

export function renderServiceParams() {
  const { fields } = SERVICE_KINDS[$('#service-kind').value];
  $('#service-params').replaceChildren(
    ...fields.map(([option, label, fallback]) =>
      el(
        'label',
        { class: 'field' },
        el('span', {}, label),
        el('input', { 'data-testid': `service-${option}`, name: option, value: fallback }),
      ),
    ),
  );
}

export function renderPatternKinds() {
  $('#pattern-kind').replaceChildren(
    ...Object.entries(PATTERNS).map(([kind, { label }]) => el('option', { value: kind }, label)),
  );
}

export function renderPatternParams() {
  const kind = $('#pattern-kind').value;
  const pattern = PATTERNS[kind];
  $('#pattern-hint').textContent = pattern.hint;
  const fields = pattern.fields.map(([option, label, fallback]) =>
    el(
      'label',
      { class: 'field' },
      el('span', {}, label),
      el('input', { 'data-testid': `pattern-${option}`, name: option, value: fallback }),
    ),
  );
  if (kind === 'custom') {
    fields.push(
      el(
        'label',
        { class: 'field wide' },
        el('span', {}, 'Arrival times (ms)'),
        el(
          'textarea',
          { 'data-testid': 'pattern-arrivals', name: 'arrivals', rows: 4 },
          '0, 100, 200, 9900, 10000',
        ),
      ),
    );
  }
  $('#pattern-params').replaceChildren(...fields);
}

/** The request body for POST /api/simulate, from the form as it stands. */
export function scenario() {
  const kind = $('#pattern-kind').value;
  const body = { policies: policies.map(policySpec) };
  const cost = jsonValue($('#cost').value);
  if (cost !== undefined) body.cost = cost;
  if (kind === 'custom') {
    const text = $('#pattern-params textarea').value.trim();
    body.arrivals = text === '' ? [] : text.split(/[\s,;]+/).map((t) => jsonValue(t) ?? t);
  } else {
    body.pattern = { kind, ...inputValues('#pattern-params') };
  }
  if (!$('#service').hidden)
    body.service = { kind: $('#service-kind').value, ...inputValues('#service-params') };
  return body;
}

/** The filled-in inputs under `selector`, by name. */
function inputValues(selector) {
  const values = {};
  for (const input of $(selector).querySelectorAll('input')) {
    const value = jsonValue(input.value);
    if (value !== undefined) values[input.name] = value;
  }
  return values;
}
