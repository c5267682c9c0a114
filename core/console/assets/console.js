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

// a file added to a related list: sent with its progress shown, by the button or by dropping it on the form
function upload(form, file) {
  const bar = form.querySelector('progress');
  const message = form.querySelector('.upload-message');
  const data = new window.FormData();
  data.append('file', file, file.name);
  const xhr = new window.XMLHttpRequest();
  xhr.open('POST', form.action);
  xhr.setRequestHeader('x-requested-with', 'upload');
  xhr.setRequestHeader('x-csrf-token', document.querySelector('meta[name="csrf-token"]')?.content ?? '');
  bar.hidden = false;
  bar.value = 0;
  xhr.upload.addEventListener('progress', (e) => {
    if (e.lengthComputable) bar.value = Math.round((e.loaded / e.total) * 100);
  });
  xhr.addEventListener('load', () => {
    let answer = {};
    try {
      answer = JSON.parse(xhr.responseText);
    } catch {
      // not the console's answer (a proxy's error page)
    }
    if (answer.ok) {
      message.textContent = form.dataset.done;
      window.location.reload();
    } else {
      bar.hidden = true;
      message.textContent = answer.message ?? form.dataset.failed;
    }
  });
  xhr.addEventListener('error', () => {
    bar.hidden = true;
    message.textContent = form.dataset.failed;
  });
  xhr.send(data);
}

document.addEventListener('DOMContentLoaded', () => {
  for (const form of document.querySelectorAll('form[data-upload]')) {
    const input = form.querySelector('input[type="file"]');
    form.addEventListener('submit', (event) => {
      if (!input.files.length) return;
      event.preventDefault();
      upload(form, input.files[0]);
    });
    form.addEventListener('dragover', (event) => {
      event.preventDefault();
      form.classList.add('dragging');
    });
    form.addEventListener('dragleave', () => form.classList.remove('dragging'));
    form.addEventListener('drop', (event) => {
      event.preventDefault();
      form.classList.remove('dragging');
      if (event.dataTransfer.files.length) upload(form, event.dataTransfer.files[0]);
    });
  }
});

// "@" in a text that mentions people (a comment): the users the user may see, completed as they type
document.addEventListener('DOMContentLoaded', () => {
  for (const area of document.querySelectorAll('textarea[data-mentions]')) {
    const list = document.createElement('ul');
    list.className = 'mention-list';
    list.setAttribute('role', 'listbox');
    list.hidden = true;
    list.id = `${area.id}-mentions`;
    area.after(list);
    area.setAttribute('aria-controls', list.id);
    area.setAttribute('aria-autocomplete', 'list');
    let chosen = -1;
    let asked = 0;
    const token = () => /(?:^|[^\p{L}\p{N}_.@-])@([\p{L}\p{N}_][\p{L}\p{N}_.-]{0,29})$/u.exec(area.value.slice(0, area.selectionStart))?.[1];
    const close = () => {
      list.hidden = true;
      chosen = -1;
    };
    const pick = (handle) => {
      const before = area.value.slice(0, area.selectionStart).replace(/@[\p{L}\p{N}_.-]*$/u, `@${handle} `);
      area.value = before + area.value.slice(area.selectionStart);
      area.selectionStart = area.selectionEnd = before.length;
      close();
      area.focus();
    };
    const mark = () => [...list.children].forEach((li, i) => li.setAttribute('aria-selected', String(i === chosen)));
    area.addEventListener('input', async () => {
      const typed = token();
      if (!typed) return close();
      const mine = ++asked;
      const res = await window.plinth.api('GET', `/users?search=${encodeURIComponent(typed)}&size=6`);
      if (mine !== asked) return;
      if (!res.ok || !res.body.items.length) return close();
      list.replaceChildren(
        ...res.body.items.map((u) => {
          const li = document.createElement('li');
          li.setAttribute('role', 'option');
          li.textContent = `${u.name} (${u.email})`;
          li.dataset.handle = u.email.split('@')[0];
          li.addEventListener('mousedown', (e) => {
            e.preventDefault();
            pick(li.dataset.handle);
          });
          return li;
        }),
      );
      chosen = 0;
      mark();
      list.hidden = false;
    });
    area.addEventListener('keydown', (e) => {
      if (list.hidden) return;
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        chosen = (chosen + (e.key === 'ArrowDown' ? 1 : list.children.length - 1)) % list.children.length;
        mark();
      } else if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        pick(list.children[chosen].dataset.handle);
      } else if (e.key === 'Escape') close();
    });
    area.addEventListener('blur', () => window.setTimeout(close, 150));
  }
});
