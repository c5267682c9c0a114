// A sheet's dashboard: draws its charts with ECharts (bi-charts.js) and lays
// its widgets on a 12-column gridstack grid. Editors drag and resize widgets,
// or move them with the buttons beside their titles or the arrow keys; each
// change saves the whole layout in one call (PUT /bi/sheets/:id/layout). A
// refusal of the API (403) turns the grid static and says why. dashboard-edit.js
// renames and removes widgets: it learns the versions a save gives (bi:saved)
// and asks the grid to drop a removed widget (bi:remove). Its texts come
// from the page (bi-texts, in the user's language); the English below only if
// that is missing.
(() => {
  const state = plinth.data('bi-dashboard');
  const container = document.getElementById('bi-grid');
  if (!state || !container) return;
  const ENGLISH = {
    'dashboardScript.saving': 'Saving the layout…',
    'dashboardScript.saved': 'Saved.',
    'dashboardScript.refused': 'You may not change this dashboard ({detail}); the layout stays as it was.',
    'dashboardScript.notSaved': 'The layout was not saved: {detail}. The widgets are back where they were.',
    'dashboardScript.left.done': '{title} moved left.',
    'dashboardScript.left.refused': '{title} cannot move further left.',
    'dashboardScript.right.done': '{title} moved right.',
    'dashboardScript.right.refused': '{title} cannot move further right.',
    'dashboardScript.up.done': '{title} moved up.',
    'dashboardScript.up.refused': '{title} cannot move further up.',
    'dashboardScript.down.done': '{title} moved down.',
    'dashboardScript.down.refused': '{title} cannot move further down.',
    'dashboardScript.narrower.done': '{title} made narrower.',
    'dashboardScript.narrower.refused': '{title} cannot get any narrower.',
    'dashboardScript.wider.done': '{title} made wider.',
    'dashboardScript.wider.refused': '{title} cannot get any wider.',
    'dashboardScript.shorter.done': '{title} made shorter.',
    'dashboardScript.shorter.refused': '{title} cannot get any shorter.',
    'dashboardScript.taller.done': '{title} made taller.',
    'dashboardScript.taller.refused': '{title} cannot get any taller.',
    'scripts.serverAnswered': 'the server answered {status}',
  };
  const text = plinth.texts(plinth.data('bi-texts') ?? ENGLISH);
  const status = document.getElementById('layout-status');
  const alertBox = document.getElementById('layout-error');
  // read when said: dashboard-edit.js may have renamed the widget
  const titleOf = (id) => document.getElementById(`w-${id}`)?.textContent ?? '';

  for (const w of state.widgets) {
    const el = container.querySelector(`[data-chart="${w.id}"]`);
    if (!el || !w.columns) continue;
    // without ECharts the values stay readable: the table shows instead of the chart
    if (!window.biCharts?.draw(el, w.chartType, w.columns, w.rows, w.chart)) {
      el.hidden = true;
      container.querySelector(`[data-chart-table="${w.id}"]`)?.classList.remove('visually-hidden');
    }
  }
  if (typeof GridStack === 'undefined') return;

  container.classList.replace('bi-grid', 'grid-stack');
  for (const item of container.children) item.removeAttribute('style');
  const grid = GridStack.init({ column: 12, cellHeight: 72, margin: 6, float: true, animate: false, handle: '.bi-widget-head', staticGrid: !state.editable }, container);
  if (!state.editable) return;

  const say = (message) => {
    alertBox.textContent = '';
    status.textContent = message;
  };
  const refuse = (message) => {
    status.textContent = '';
    alertBox.innerHTML = '';
    const p = document.createElement('p');
    p.className = 'alert';
    p.textContent = message;
    alertBox.append(p);
  };
  for (const el of document.querySelectorAll('.bi-arrange, #layout-help')) el.hidden = false;

  const layout = () => Object.fromEntries(grid.engine.nodes.map((n) => [n.id, { x: n.x, y: n.y, w: n.w, h: n.h }]));
  let saved = layout();
  let applying = false;
  let saving = false;
  let again = false;
  /** what a keyboard step did, said with the save's outcome */
  let moved = '';

  /** Puts every widget back where the last saved layout has it (no save: it is that layout). */
  function restore() {
    applying = true;
    grid.load(
      Object.entries(saved).map(([id, box]) => ({ id, ...box })),
      false,
    );
    applying = false;
  }

  function lock(reason) {
    restore();
    grid.setStatic(true);
    for (const el of document.querySelectorAll('.bi-arrange, #layout-help')) el.hidden = true;
    state.editable = false;
    refuse(reason);
  }

  async function save() {
    if (saving) {
      again = true;
      return;
    }
    saving = true;
    const what = moved;
    say(`${what}${text('dashboardScript.saving')}`);
    const next = layout();
    const res = await plinth.api('PUT', `/bi/sheets/${state.sheetId}/layout`, { widgets: next });
    saving = false;
    const detail = res.body?.errors?.[0]?.message ?? res.body?.detail ?? res.body?.title ?? text('scripts.serverAnswered', { status: res.status });
    if (res.ok) {
      saved = next;
      say(`${what}${text('dashboardScript.saved')}`);
      // every widget saved has a new version
      container.dispatchEvent(new window.CustomEvent('bi:saved', { detail: res.body.items }));
    } else if (res.status === 403) {
      again = false;
      return lock(text('dashboardScript.refused', { detail }));
    } else {
      restore();
      refuse(text('dashboardScript.notSaved', { detail }));
    }
    if (again) {
      again = false;
      save();
    }
  }

  grid.on('change', () => {
    if (!applying) save();
  });
  // a widget the API removed leaves the grid (and the layout the next save sends)
  container.addEventListener('bi:remove', (event) => {
    event.preventDefault();
    const id = event.detail.dataset.widget;
    applying = true;
    grid.removeWidget(event.detail.closest('.grid-stack-item'));
    applying = false;
    delete saved[id];
  });

  // each step: its change, and the keys of what is said when it cannot be made and when it was
  const STEPS = {
    left: [{ x: -1 }, 'dashboardScript.left.refused', 'dashboardScript.left.done'],
    right: [{ x: 1 }, 'dashboardScript.right.refused', 'dashboardScript.right.done'],
    up: [{ y: -1 }, 'dashboardScript.up.refused', 'dashboardScript.up.done'],
    down: [{ y: 1 }, 'dashboardScript.down.refused', 'dashboardScript.down.done'],
    narrower: [{ w: -1 }, 'dashboardScript.narrower.refused', 'dashboardScript.narrower.done'],
    wider: [{ w: 1 }, 'dashboardScript.wider.refused', 'dashboardScript.wider.done'],
    shorter: [{ h: -1 }, 'dashboardScript.shorter.refused', 'dashboardScript.shorter.done'],
    taller: [{ h: 1 }, 'dashboardScript.taller.refused', 'dashboardScript.taller.done'],
  };
  /** One step of a widget by keyboard or button; gridstack pushes others aside as a drag would. */
  function arrange(section, how, focus) {
    const el = section.closest('.grid-stack-item');
    const n = el?.gridstackNode;
    const [step, refused, done] = STEPS[how] ?? [];
    if (!n || !step || !state.editable) return;
    const next = { x: n.x + (step.x ?? 0), y: n.y + (step.y ?? 0), w: n.w + (step.w ?? 0), h: n.h + (step.h ?? 0) };
    const inside = next.x >= 0 && next.y >= 0 && next.w >= 1 && next.h >= 1 && next.x + next.w <= 12;
    const before = JSON.stringify([n.x, n.y, n.w, n.h]);
    if (inside) {
      moved = `${text(done, { title: titleOf(n.id) })} `;
      grid.update(el, next);
      moved = '';
    }
    // the grid reorders its items in the DOM, which drops the focus: give it back
    focus?.focus();
    if (!inside || before === JSON.stringify([n.x, n.y, n.w, n.h])) say(text(refused, { title: titleOf(n.id) }));
  }

  container.addEventListener('click', (event) => {
    const button = event.target.closest('[data-arrange]');
    if (button) arrange(button.closest('[data-widget]'), button.dataset.arrange, button);
  });
  const KEYS = { ArrowLeft: ['left', 'narrower'], ArrowRight: ['right', 'wider'], ArrowUp: ['up', 'shorter'], ArrowDown: ['down', 'taller'] };
  container.addEventListener('keydown', (event) => {
    const section = event.target.closest?.('[data-widget]');
    const how = KEYS[event.key];
    if (!section || event.target !== section || !how || event.altKey || event.ctrlKey || event.metaKey) return;
    event.preventDefault();
    arrange(section, how[event.shiftKey ? 1 : 0], section);
  });
})();
