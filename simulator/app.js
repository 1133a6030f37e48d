// The simulator page's entry: wires the tabs, forms and buttons to their views and runs the default scenario.

import { loadAdaptiveScenarios, resizeAdaptiveCharts, runAdaptive } from './adaptive-view.js';
import { loadPolicyKinds } from './choices.js';
import { $, setStatus } from './dom.js';
import {
  addPolicy,
  renderPatternKinds,
  renderPatternParams,
  renderPolicies,
  renderServiceKinds,
  renderServiceParams,
} from './forms.js';
import { loadLiveRoutes, resizeLiveChart, startLive, stopLiveByHand } from './live-view.js';
import { resizeSimulationCharts, runSimulation } from './simulate-view.js';

// The adaptive scenarios take the server a second or so each the first time: run only once the tab is opened.
let adaptiveShown = false;
let adaptiveLoaded;

function showTab(name) {
  for (const tab of document.querySelectorAll('.tab'))
    tab.setAttribute('aria-pressed', String(tab.dataset.tab === name));
  $('#simulate').hidden = name !== 'simulate';
  $('#live').hidden = name !== 'live';
  $('#adaptive').hidden = name !== 'adaptive';
  if (name === 'adaptive' && !adaptiveShown) {
    adaptiveShown = true;
    adaptiveLoaded.then((loaded) => {
      if (loaded) runAdaptive();
    });
  }
}

for (const tab of document.querySelectorAll('.tab'))
  tab.addEventListener('click', () => showTab(tab.dataset.tab));
renderPatternKinds();
renderServiceKinds();
$('#pattern-kind').addEventListener('change', renderPatternParams);
$('#service-kind').addEventListener('change', renderServiceParams);
// The policy cards are built from the kinds the server offers: until its list has come, there is nothing to run.
let kindsLoaded = false;
$('#add-policy').addEventListener('click', () => {
  if (kindsLoaded) addPolicy();
});
$('#scenario').addEventListener('submit', (event) => {
  event.preventDefault();
  if (kindsLoaded) runSimulation();
});
$('#live-form').addEventListener('submit', (event) => {
  event.preventDefault();
  startLive();
});
$('#live-stop').addEventListener('click', stopLiveByHand);
$('#adaptive-form').addEventListener('submit', (event) => {
  event.preventDefault();
  runAdaptive();
});
new ResizeObserver(() => {
  resizeSimulationCharts();
  resizeLiveChart();
  resizeAdaptiveCharts();
}).observe(document.body);

renderServiceParams();
renderPatternParams();
loadLiveRoutes();
adaptiveLoaded = loadAdaptiveScenarios();
try {
  await loadPolicyKinds();
  kindsLoaded = true;
} catch (error) {
  setStatus($('#sim-status'), 'error', `The policy kinds could not be loaded: ${error.message}`);
}
if (kindsLoaded) {
  renderPolicies();
  runSimulation();
}
