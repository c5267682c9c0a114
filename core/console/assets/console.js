// Progressive enhancement only: every generic page works without this file.
// Pages with scripts of their own (a board, a dashboard) call the API through
// plinth.api, which goes through the console's relay with the page's CSRF token.
window.plinth = {
  /** fetch('/console/api' + path): JSON in and out; resolves to { status, ok, body } */
  async api(method, path, body, headers = {}) {
    const token = document.querySelector('meta[name="csrf-token"]')?.content ?? '';
    const res = await fetch(`/console/api${path}`, {
      method,
      credentials: 'same-origin',
      headers: { 'x-csrf-token': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // CSV and other text answers stay text
    }
    if (res.status === 401) window.location.assign(`/login?next=${encodeURIComponent(window.location.pathname + window.location.search)}`);
    return { status: res.status, ok: res.ok, body: parsed, headers: res.headers };
  },
  /** the JSON a page put in <script type="application/json" id="…"> for its script */
  data(id) {
    const el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  },
  /** "{count} tasks" with { count: 3 } is "3 tasks"; a placeholder without a value stays (as core/console/texts.ts) */
  fillIn(template, values = {}) {
    return template.replace(/\{([A-Za-z][A-Za-z0-9]*)\}/g, (whole, name) => values[name] ?? whole);
  },
  /** text(key, values) over a page's texts for its script, `fallback` for keys they lack, else the key */
  texts(texts, fallback = {}) {
    return (key, values) => window.plinth.fillIn(texts[key] ?? fallback[key] ?? key, values);
  },
};

document.addEventListener('DOMContentLoaded', () => {
  // the switchers submit on change; their buttons stay for keyboards without a change event
  for (const form of document.querySelectorAll('form[data-autosubmit]')) {
    const select = form.querySelector('select');
    const button = form.querySelector('button');
    if (button) button.classList.add('visually-hidden');
    if (select) select.addEventListener('change', () => form.requestSubmit());
  }
  // a key-value field: one more blank row per click (the form has two blank rows without this)
  for (const button of document.querySelectorAll('[data-add-pair]')) {
    const body = button.closest('fieldset').querySelector('[data-pairs]');
    button.hidden = false;
    button.addEventListener('click', () => {
      const row = body.lastElementChild.cloneNode(true);
      const n = body.children.length + 1;
      for (const input of row.querySelectorAll('input')) {
        input.value = '';
        input.id = input.id.replace(/-\d+$/, `-${n}`);
        input.setAttribute('aria-label', input.getAttribute('aria-label').replace(/\d+$/, String(n)));
      }
      body.append(row);
      row.querySelector('input').focus();
    });
  }
});

// a row of a list opens its record on a click anywhere in it (its first cell holds the real link, for keyboards and middle-click)
document.addEventListener('click', (event) => {
  const row = event.target.closest('tr[data-href]');
  if (!row || event.defaultPrevented || event.button !== 0 || event.target.closest('a, button, input, select, textarea, label')) return;
  if (window.getSelection()?.toString()) return;
  if (event.ctrlKey || event.metaKey) window.open(row.dataset.href, '_blank', 'noopener');
  else window.location.assign(row.dataset.href);
});

// a secret shown once: copied to the clipboard by its button
document.addEventListener('click', async (event) => {
  const button = event.target.closest('[data-copy]');
  if (!button) return;
  const input = document.querySelector(button.dataset.copy);
  input.select();
  try {
    await window.navigator.clipboard.writeText(input.value);
  } catch {
    document.execCommand('copy');
  }
  button.textContent = button.dataset.copied;
});
