// The simulator page's entry: wires the tabs, forms and buttons to their views and runs the default scenario.
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

function showTab(name) {
  for (const tab of document.querySelectorAll('.tab'))
    tab.setAttribute('aria-pressed', String(tab.dataset.tab === name));
  $('#simulate').hidden = name !== 'simulate';
  $('#live').hidden = name !== 'live';
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
new ResizeObserver(() => {
  resizeSimulationCharts();
  resizeLiveChart();
}).observe(document.body);

renderServiceParams();
renderPatternParams();
loadLiveRoutes();
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
