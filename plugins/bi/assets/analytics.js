// The analytics builder without page loads: rows of measures, groupings and
// filters added and removed in place, the sort choices kept to the result's
// columns, and Run posting the query (POST /bi/analytics) to show its table,
// chart, SQL and CSV link here; the address keeps the choices, so a reload or
// a shared link runs the same query (each answer announced to analytics-add.js
// and analytics-save.js as a bi:result event). The form works without this
// file. Its texts are analytics-view.js's (the page's bi-texts block); a row's
// labels are the templates the page left in their data-label.
(() => {
  const state = plinth.data('bi-analytics');
  const form = document.getElementById('bi-builder');
  if (!state || !form || !window.biAnalyticsView) return;
  const $ = (id) => document.getElementById(id);
  const PREFIX = { m: 'bi-m', d: 'bi-d', ff: 'bi-ff', fo: 'bi-fo', fv: 'bi-fv' };
  const view = window.biAnalyticsView;
  const { text } = view;
  let result = state.result;
  let running = false;

  // rows: add, remove, and numbers and ids kept in order
  function renumber(list) {
    const rows = [...list.querySelectorAll('[data-row]')];
    rows.forEach((row, i) => {
      for (const label of row.querySelectorAll('label[data-label]')) {
        const control = label.parentElement.querySelector('select, input');
        control.id = `${PREFIX[control.name]}-${i}`;
        label.htmlFor = control.id;
        label.textContent = plinth.fillIn(label.dataset.label, { number: i + 1 });
      }
      const remove = row.querySelector('[data-remove]');
      remove.setAttribute('aria-label', plinth.fillIn(remove.dataset.label, { number: i + 1 }));
    });
  }
  const clear = (row) => {
    for (const c of row.querySelectorAll('select, input')) {
      c.value = c.name === 'fo' ? 'equals' : '';
      c.removeAttribute('aria-invalid');
    }
  };
  for (const list of form.querySelectorAll('[data-rows]')) renumber(list);
  for (const b of form.querySelectorAll('[data-remove], [data-add]')) b.hidden = false;
  form.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-add], button[data-remove]');
    if (!button) return;
    const list = button.dataset.add ? form.querySelector(`[data-rows="${button.dataset.add}"]`) : button.closest('[data-rows]');
    const rows = list.querySelectorAll('[data-row]');
    if (button.dataset.add) {
      const row = rows[rows.length - 1].cloneNode(true);
      clear(row);
      list.append(row);
      renumber(list);
      row.querySelector('select, input').focus();
    } else {
      const row = button.closest('[data-row]');
      const next = row.nextElementSibling ?? row.previousElementSibling;
      if (rows.length > 1) row.remove();
      else clear(row);
      renumber(list);
      (rows.length > 1 ? next : row).querySelector('select, input').focus();
    }
    refreshSort();
  });

  const chosenText = (select) => select?.selectedOptions[0]?.textContent ?? '';
  const values = (name) => [...form.querySelectorAll(`[name="${name}"]`)];

  /** The result's columns, as the query will name them: the choices of Sort by. */
  function refreshSort() {
    const sort = $('bi-sort');
    const columns = values('d')
      .filter((s) => s.value)
      .map((s) => [s.value, chosenText(s)]);
    if ($('bi-time')?.value && $('bi-granularity').value) columns.push([`${$('bi-time').value}.${$('bi-granularity').value}`, `${chosenText($('bi-time'))} (${chosenText($('bi-granularity'))})`]);
    for (const s of values('m').filter((m) => m.value)) columns.push([s.value.replace(':', '_'), chosenText(s)]);
    const current = sort.value;
    sort.replaceChildren(new window.Option(text('control.sortDefault'), ''), ...columns.map(([value, label]) => new window.Option(label, value, false, value === current)));
  }
  form.addEventListener('change', (event) => {
    if (['m', 'd', 't', 'g'].includes(event.target.name)) refreshSort();
    if (event.target.id === 'bi-chart') drawChart();
  });

  /** The query and, for each part of it, the control it came from (as analytics-form.ts builds it). */
  function build() {
    const controls = [
      ['/table', 'bi-table', text('control.table')],
      ['/measures', 'bi-m-0', text('control.measures')],
      ['/limit', 'bi-limit', text('control.limit')],
      ['/order', 'bi-sort', text('control.sort')],
    ];
    const query = { table: state.table };
    if (state.app) {
      controls.push(['/app', 'bi-app', text('control.app')]);
      query.app = state.app;
    }
    const measures = values('m').filter((s) => s.value);
    if (measures.length) {
      query.measures = measures.map((s, i) => {
        controls.push([`/measures/${i}`, s.id, text('control.measure', { number: i + 1 })]);
        const [agg, field] = s.value.split(':');
        return field ? { agg, field } : { agg };
      });
    }
    const dims = values('d').filter((s) => s.value);
    if (dims.length) query.dimensions = dims.map((s, i) => (controls.push([`/dimensions/${i}`, s.id, text('control.groupBy', { number: i + 1 })]), s.value));
    const t = $('bi-time')?.value;
    if (t) {
      const [g, from, to] = ['bi-granularity', 'bi-from', 'bi-to'].map((id) => $(id).value);
      controls.push(
        ['/timeDimensions/0', 'bi-time', text('control.time')],
        ['/timeDimensions/0/granularity', 'bi-granularity', text('control.period')],
        ['/timeDimensions/0/dateRange', from ? 'bi-to' : 'bi-from', text('control.dateRange')],
      );
      query.timeDimensions = [{ field: t, ...(g ? { granularity: g } : {}), ...(from || to ? { dateRange: [from, to] } : {}) }];
    }
    const ops = values('fo');
    const texts = values('fv');
    const filters = values('ff').flatMap((s, i) => (s.value ? [{ field: s.value, op: ops[i].value, text: texts[i].value.trim(), ids: [s.id, ops[i].id, texts[i].id] }] : []));
    if (filters.length) {
      query.filters = filters.map((f, i) => {
        const number = { number: i + 1 };
        const n = text('control.filter', number);
        controls.push(
          [`/filters/${i}`, f.ids[0], n],
          [`/filters/${i}/op`, f.ids[1], n],
          [`/filters/${i}/value`, f.ids[2], text('control.filterValue', number)],
          [`/filters/${i}/values`, f.ids[2], text('control.filterValues', number)],
        );
        const type = state.fields[f.field]?.type;
        const typed = (v) => (type === 'integer' && /^-?\d+$/.test(v) ? Number(v) : type === 'boolean' && /^(true|false)$/i.test(v) ? v.toLowerCase() === 'true' : v);
        if (f.op === 'set' || f.op === 'notSet') return { field: f.field, op: f.op };
        if (f.op === 'in' || f.op === 'notIn') {
          const list = f.text
            .split(',')
            .map((v) => v.trim())
            .filter(Boolean);
          return { field: f.field, op: f.op, ...(list.length ? { values: list.map(typed) } : {}) };
        }
        return { field: f.field, op: f.op, value: typed(f.text) };
      });
    }
    if ($('bi-sort').value) query.order = [{ by: $('bi-sort').value, dir: $('bi-dir').value }];
    const limit = $('bi-limit').value.trim();
    if (limit) query.limit = /^\d+$/.test(limit) ? Number(limit) : limit;
    return { query, controls };
  }

  function drawChart() {
    const el = $('bi-result-chart');
    const type = $('bi-chart').value;
    if (!result || !type || !result.rows.length) return void (el.hidden = true);
    el.setAttribute('aria-label', view.summary(chosenText($('bi-chart')), result));
    el.hidden = false;
    if (!window.biCharts?.draw(el, type, result.columns, result.rows, {})) el.hidden = true;
  }

  function showResult(answer, query) {
    result = answer;
    $('bi-result').hidden = false;
    $('bi-result-meta').textContent = view.meta(answer);
    view.table($('bi-result-table'), answer);
    $('bi-csv').href = `/console/api/bi/analytics/csv?query=${encodeURIComponent(JSON.stringify(query))}`;
    $('bi-sql').textContent = answer.sql;
    drawChart();
    // analytics-add.js and analytics-save.js offer the query that answered as a widget or a
    // saved query keeps it: without app (each reads its own application's sources)
    const { app: _app, ...stored } = query;
    document.dispatchEvent(new window.CustomEvent('bi:result', { detail: { query: stored } }));
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (running) return;
    const { query, controls } = build();
    // not disabled: a disabled button would drop the keyboard's focus
    const run = form.querySelector('button[type="submit"]');
    running = true;
    run.setAttribute('aria-disabled', 'true');
    const res = await plinth.api('POST', '/bi/analytics', query).finally(() => {
      running = false;
      run.removeAttribute('aria-disabled');
    });
    const address = new URLSearchParams(new window.FormData(form));
    address.set('run', '1');
    window.history.replaceState(null, '', `${window.location.pathname}?${address}`);
    if (res.ok) {
      view.errors($('bi-errors'), form, [], controls);
      return showResult(res.body, query);
    }
    result = null;
    $('bi-result').hidden = true;
    document.dispatchEvent(new window.CustomEvent('bi:result', { detail: null }));
    const body = res.body ?? {};
    const message = body.detail ?? body.title ?? text('scripts.serverAnswered', { status: res.status });
    view.errors($('bi-errors'), form, body.errors?.length ? body.errors : [{ path: '', message }], controls);
  });

  drawChart();
})();
