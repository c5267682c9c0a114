// The analytics result as the page shows it, for analytics.js: the table
// with the answer's column metadata (values formatted as the server's table
// does in widget-view.ts), the line about the answer, and the API's field
// errors as links to the builder's controls they are about.
(() => {
  const numeric = (c) => c.role === 'measure' || c.type === 'integer' || c.type === 'decimal';

  function cellText(c, v) {
    if (v === null || v === undefined) return numeric(c) ? '' : '(none)';
    if (numeric(c) && v !== '' && Number.isFinite(Number(v))) {
      const decimals = typeof v === 'string' ? Math.min(4, v.split('.')[1]?.length ?? 0) : null;
      return Number(v).toLocaleString('en', { minimumFractionDigits: decimals ?? 0, maximumFractionDigits: decimals ?? 4 });
    }
    return String(v);
  }

  /** "4 rows · 12 ms · from the cache", as analytics-page.ts writes it. */
  function meta(answer) {
    const parts = [`${answer.rowCount} ${answer.rowCount === 1 ? 'row' : 'rows'}`, `${answer.durationMs} ms`];
    if (answer.cached) parts.push('from the cache');
    if (answer.truncated) parts.push('more rows matched than the limit lets through');
    return parts.join(' · ');
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
    if (!rows.length) rows.push(Object.assign(document.createElement('tr'), { innerHTML: `<td colspan="${answer.columns.length || 1}">No row matched.</td>` }));
    el.tBodies[0].replaceChildren(...rows);
  }

  /** The errors in `box`, each linking the control its pointer is about (the longest pointer that contains it); those controls marked invalid. */
  function errors(box, form, list, controls) {
    for (const c of form.querySelectorAll('[aria-invalid]')) c.removeAttribute('aria-invalid');
    box.replaceChildren();
    if (!list.length) return;
    const alert = document.createElement('div');
    alert.className = 'alert';
    alert.innerHTML = '<p><strong>The query was not run.</strong></p><ul></ul>';
    for (const e of list) {
      const c = controls.filter(([p]) => e.path === p || e.path.startsWith(`${p}/`)).sort((a, b) => b[0].length - a[0].length)[0];
      const control = c ? document.getElementById(c[1]) : null;
      const li = document.createElement('li');
      const text = c ? `${c[2]}: ${e.message}` : `${e.path || 'Query'}: ${e.message}`;
      if (control) {
        control.setAttribute('aria-invalid', 'true');
        li.append(Object.assign(document.createElement('a'), { href: `#${c[1]}`, textContent: text }));
      } else li.textContent = text;
      alert.querySelector('ul').append(li);
    }
    box.append(alert);
  }

  window.biAnalyticsView = { meta, table, errors };
})();
