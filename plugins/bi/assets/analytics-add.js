// "Add to a dashboard" under an analytics result: posts the query that
// answered (the page's, then each run's, announced by analytics.js as a
// bi:result event) as a widget of the chosen sheet (POST
// /bi/sheets/:id/widgets; the API places it below the sheet's other widgets)
// and links that dashboard. What the API refuses: its problem in the alert,
// its field errors beside their inputs. After a run the title becomes the new
// query's summary, the kind and chart type follow the builder's chart, unless
// the user chose them. Its texts come from the page (bi-texts, in the user's
// language); the English below only if that is missing.
(() => {
  const state = plinth.data('bi-analytics');
  const form = document.getElementById('bi-add-form');
  if (!state || !form) return;
  const ENGLISH = {
    'addWidgetScript.summary': '{table}: {measures}',
    'addWidgetScript.summaryBy': '{table}: {measures} by {groups}',
    'addWidgetScript.sheetRequired': 'Choose the page to add the widget to.',
    'addWidgetScript.adding': 'Adding the widget…',
    'addWidgetScript.added': '{title} was added to {sheet} of {app}.',
    'addWidgetScript.open': 'Open {sheet}',
    'addWidgetScript.refused': 'You may not add a widget to {sheet}: {detail}',
    'addWidgetScript.failed': 'The widget was not added: {detail}',
    'result.errorAt': '{control}: {message}',
    'result.query': 'Query',
    'chart.values': 'values',
    'chart.and': '{a} and {b}',
    'scripts.serverAnswered': 'the server answered {status}',
  };
  const text = plinth.texts(plinth.data('bi-texts') ?? ENGLISH);
  const $ = (id) => document.getElementById(id);
  const [sheet, title, kind, chart] = ['bi-add-sheet', 'bi-add-title', 'bi-add-kind', 'bi-add-chart'].map($);
  const status = $('bi-add-status');
  const alertBox = $('bi-add-error');
  const button = form.querySelector('button[type="submit"]');
  /** the inputs the API's error paths are about */
  const INPUTS = { '/title': title, '/kind': kind, '/chartType': chart, '/sheetId': sheet };
  /** a new widget's size on the 12-column grid, by kind */
  const SIZES = { chart: { w: 6, h: 4 }, number: { w: 3, h: 2 }, table: { w: 6, h: 4 } };
  let query = state.query;
  let busy = false;
  /** the inputs the user chose themselves: a new run leaves them */
  const chosen = new Set();

  form.hidden = false;
  const showChartType = () => ($('bi-add-chart-field').hidden = kind.value !== 'chart');
  form.addEventListener('input', (event) => chosen.add(event.target.name));
  kind.addEventListener('change', showChartType);

  const chosenText = (select) => select?.selectedOptions[0]?.textContent ?? '';
  /** What the builder's form says of the query that ran: its summary, whether it groups, its chart. */
  function builderDefaults() {
    const builder = $('bi-builder');
    const picked = (name) => [...builder.querySelectorAll(`[name="${name}"]`)].filter((s) => s.value).map(chosenText);
    const groups = picked('d');
    if ($('bi-time')?.value && $('bi-granularity').value) groups.push(`${chosenText($('bi-time'))} (${chosenText($('bi-granularity'))})`);
    const values = { table: state.tableLabel, measures: picked('m').join(', ') || text('chart.values') };
    const summary = groups.length ? text('addWidgetScript.summaryBy', { ...values, groups: groups.reduce((a, b) => text('chart.and', { a, b })) }) : text('addWidgetScript.summary', values);
    const chartType = $('bi-chart').value;
    return { title: summary.slice(0, 200), kind: chartType ? 'chart' : groups.length ? 'table' : 'number', chartType: chartType || 'bar' };
  }

  const { clear: clearProblems, fieldError, place } = window.biFormProblems(alertBox, INPUTS);

  document.addEventListener('bi:result', (event) => {
    query = event.detail?.query ?? null;
    status.replaceChildren();
    clearProblems();
    if (!query) return;
    const defaults = builderDefaults();
    if (!chosen.has('title')) title.value = defaults.title;
    if (!chosen.has('kind')) kind.value = defaults.kind;
    if (!chosen.has('chartType')) chart.value = defaults.chartType;
    showChartType();
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (busy || !query) return;
    clearProblems();
    status.replaceChildren();
    if (!sheet.value) {
      fieldError(sheet, text('addWidgetScript.sheetRequired'));
      return sheet.focus();
    }
    const option = sheet.selectedOptions[0];
    const where = { sheet: option.textContent, app: option.parentElement.label ?? '' };
    const name = title.value.trim();
    const body = { kind: kind.value, query, ...SIZES[kind.value], ...(name ? { title: name } : {}), ...(kind.value === 'chart' ? { chartType: chart.value } : {}) };
    busy = true;
    // not disabled: a disabled button would drop the keyboard's focus
    button.setAttribute('aria-disabled', 'true');
    status.textContent = text('addWidgetScript.adding');
    const res = await plinth.api('POST', `/bi/sheets/${sheet.value}/widgets`, body).finally(() => {
      busy = false;
      button.removeAttribute('aria-disabled');
    });
    if (res.ok) {
      const link = Object.assign(document.createElement('a'), { href: option.dataset.url, textContent: text('addWidgetScript.open', where) });
      status.replaceChildren(`${text('addWidgetScript.added', { ...where, title: res.body.title || name || chosenText(kind) })} `, link);
      return;
    }
    status.replaceChildren();
    const problem = res.body && typeof res.body === 'object' ? res.body : {};
    const detail = problem.detail || problem.title || text('scripts.serverAnswered', { status: res.status });
    const box = Object.assign(document.createElement('div'), { className: 'alert' });
    box.append(Object.assign(document.createElement('p'), { textContent: text(res.status === 403 ? 'addWidgetScript.refused' : 'addWidgetScript.failed', { ...where, detail }) }));
    const { first, others } = place(problem.errors);
    if (others.length) {
      const list = document.createElement('ul');
      for (const e of others) list.append(Object.assign(document.createElement('li'), { textContent: text('result.errorAt', { control: e.path || text('result.query'), message: e.message }) }));
      box.append(list);
    }
    alertBox.replaceChildren(box);
    first?.focus();
  });
})();
