// The analytics result as the page shows it, for analytics.js: the table
// with the answer's column metadata (values formatted as the server's table
// does in widget-view.ts), the line about the answer, the chart's summary and
// the API's field errors as links to the builder's controls they are about.
// The texts of the page's scripts come from the page (bi-texts, in the user's
// language); the English below only if that is missing.
(() => {
  const ENGLISH = {
    'chart.none': '(none)',
    'chart.anyType': 'A',
    'chart.summary': '{type} chart of {measures}: {groups}; the values follow as a table.',
    'chart.summaryBy': '{type} chart of {measures} by {dimensions}: {groups}; the values follow as a table.',
    'chart.values': 'values',
    'chart.and': '{a} and {b}',
    'chart.oneGroup': '{count} group',
    'chart.groups': '{count} groups',
    'chart.moreNotShown': '{groups} (more not shown)',
    'result.oneRow': '{count} row',
    'result.rows': '{count} rows',
    'result.cached': 'from the cache',
    'result.truncated': 'more rows matched than the limit lets through',
    'result.noRow': 'No row matched.',
    'result.notRun': 'The query was not run.',
    'result.errorAt': '{control}: {message}',
    'result.query': 'Query',
    'control.app': 'Application',
    'control.table': 'Table',
    'control.measures': 'Measures',
    'control.measure': 'Measure {number}',
    'control.groupBy': 'Group by {number}',
    'control.time': 'Time',
    'control.period': 'Period',
    'control.dateRange': 'Date range',
    'control.filter': 'Filter {number}',
    'control.filterValue': 'Filter {number} value',
    'control.filterValues': 'Filter {number} values',
    'control.sort': 'Sort by',
    'control.sortDefault': 'Default',
    'control.limit': 'Limit',
    'scripts.serverAnswered': 'the server answered {status}',
  };
  const text = plinth.texts(plinth.data('bi-texts') ?? ENGLISH);
  const numeric = (c) => c.role === 'measure' || c.type === 'integer' || c.type === 'decimal';

  function cellText(c, v) {
    if (v === null || v === undefined) return numeric(c) ? '' : text('chart.none');
    if (numeric(c) && v !== '' && Number.isFinite(Number(v))) {
      const decimals = typeof v === 'string' ? Math.min(4, v.split('.')[1]?.length ?? 0) : null;
      return Number(v).toLocaleString('en', { minimumFractionDigits: decimals ?? 0, maximumFractionDigits: decimals ?? 4 });
    }
    return String(v);
  }

  /** "4 rows · 12 ms · from the cache", as analytics-page.ts writes it. */
  function meta(answer) {
    const parts = [text(answer.rowCount === 1 ? 'result.oneRow' : 'result.rows', { count: answer.rowCount }), `${answer.durationMs} ms`];
    if (answer.cached) parts.push(text('result.cached'));
    if (answer.truncated) parts.push(text('result.truncated'));
    return parts.join(' · ');
  }

  /** What a screen reader says for the chart of `type` (its name as the page shows it), as widget-view.ts's chartSummary. */
  function summary(type, answer) {
    const measures = answer.columns.filter((c) => c.role === 'measure').map((c) => c.label);
    const dimensions = answer.columns.filter((c) => c.role !== 'measure').map((c) => c.label);
    const n = answer.rows.length;
    const count = text(n === 1 ? 'chart.oneGroup' : 'chart.groups', { count: n });
    const values = {
      type: type || text('chart.anyType'),
      measures: measures.length ? measures.join(', ') : text('chart.values'),
      groups: answer.truncated ? text('chart.moreNotShown', { groups: count }) : count,
    };
    if (!dimensions.length) return text('chart.summary', values);
    return text('chart.summaryBy', { ...values, dimensions: dimensions.reduce((a, b) => text('chart.and', { a, b })) });
  }

  function table(el, answer) {
    const head = document.createElement('tr');
    for (const c of answer.columns) {
      const th = Object.assign(document.createElement('th'), { scope: 'col', className: numeric(c) ? 'numeric' : '' });
      const about = Object.assign(document.createElement('span'), { className: 'bi-col-meta', textContent: `${c.name} · ${c.type}` });
      about.setAttribute('aria-hidden', 'true');
      th.append(`${c.label} `, about);
      head.append(th);
    }
    el.tHead.replaceChildren(head);
    const rows = answer.rows.map((r) => {
      const tr = document.createElement('tr');
      for (const c of answer.columns) tr.append(Object.assign(document.createElement('td'), { className: numeric(c) ? 'numeric' : '', textContent: cellText(c, r[c.name]) }));
      return tr;
    });
    if (!rows.length) {
      const td = Object.assign(document.createElement('td'), { colSpan: answer.columns.length || 1, textContent: text('result.noRow') });
      const tr = document.createElement('tr');
      tr.append(td);
      rows.push(tr);
    }
    el.tBodies[0].replaceChildren(...rows);
  }

  /** The errors in `box`, each linking the control its pointer is about (the longest pointer that contains it); those controls marked invalid. */
  function errors(box, form, list, controls) {
    for (const c of form.querySelectorAll('[aria-invalid]')) c.removeAttribute('aria-invalid');
    box.replaceChildren();
    if (!list.length) return;
    const alert = document.createElement('div');
    alert.className = 'alert';
    const strong = Object.assign(document.createElement('strong'), { textContent: text('result.notRun') });
    const p = document.createElement('p');
    p.append(strong);
    alert.append(p, document.createElement('ul'));
    for (const e of list) {
      const c = controls.filter(([p]) => e.path === p || e.path.startsWith(`${p}/`)).sort((a, b) => b[0].length - a[0].length)[0];
      const control = c ? document.getElementById(c[1]) : null;
      const li = document.createElement('li');
      const line = text('result.errorAt', { control: c ? c[2] : e.path || text('result.query'), message: e.message });
      if (control) {
        control.setAttribute('aria-invalid', 'true');
        li.append(Object.assign(document.createElement('a'), { href: `#${c[1]}`, textContent: line }));
      } else li.textContent = line;
      alert.querySelector('ul').append(li);
    }
    box.append(alert);
  }

  window.biAnalyticsView = { meta, summary, table, errors, text };
})();
