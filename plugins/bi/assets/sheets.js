// The pages (sheets) of a BI application: add one, move one up or down (the
// whole order saved in one call, PUT /bi/apps/:id/sheet-order) and delete one
// after a confirmation. Every change goes through plinth.api; what the API
// refuses is shown in the page's alert. Its texts come from the page
// (bi-texts, in the user's language); the English below only if that is missing.
(() => {
  const state = plinth.data('bi-sheets');
  if (!state) return;
  const ENGLISH = {
    'sheetsScript.movedUp': 'Moved {name} up to position {position}.',
    'sheetsScript.movedDown': 'Moved {name} down to position {position}.',
    'sheetsScript.reorderRefused': 'You may not reorder the pages here: {detail}',
    'sheetsScript.reorderFailed': 'Could not reorder the pages: {detail}',
    'sheetsScript.deleteText': 'The page {name} and all its widgets will be deleted. This cannot be undone.',
    'sheetsScript.deleteRefused': 'You may not delete {name} here: {detail}',
    'sheetsScript.deleteFailed': 'Could not delete {name}: {detail}',
    'sheetsScript.nameRequired': 'Give the page a name.',
    'sheetsScript.nameInvalid': 'The name {message}.',
    'sheetsScript.addRefused': 'You may not add the page here: {detail}',
    'sheetsScript.addFailed': 'Could not add the page: {detail}',
    'scripts.serverAnswered': 'the server answered {status}',
  };
  const text = plinth.texts(plinth.data('bi-texts') ?? ENGLISH);
  const tbody = document.querySelector('#sheets tbody');
  const status = document.getElementById('sheets-status');
  const alertBox = document.getElementById('sheets-error');
  const byId = new Map(state.sheets.map((s) => [s.id, s]));

  const say = (message) => {
    alertBox.textContent = '';
    status.textContent = message;
  };
  /** The API's refusal (403: `refused`'s text) or failure (`failed`'s) in the alert. */
  const fail = (res, refused, failed, values = {}) => {
    status.textContent = '';
    const body = res.body || {};
    const detail = body.detail || body.title || text('scripts.serverAnswered', { status: res.status });
    alertBox.innerHTML = '';
    const p = document.createElement('p');
    p.className = 'alert';
    p.textContent = text(res.status === 403 ? refused : failed, { ...values, detail });
    alertBox.append(p);
  };

  for (const el of document.querySelectorAll('[data-move], [data-delete], #new-sheet')) el.hidden = false;

  const rows = () => [...tbody.querySelectorAll('tr[data-sheet]')];
  /** Numbers and up/down buttons after a move; the focused button stays usable. */
  const renumber = () => {
    const all = rows();
    all.forEach((tr, i) => {
      tr.querySelector('[data-number]').textContent = String(i + 1);
      tr.querySelector('[data-move="up"]').disabled = i === 0;
      tr.querySelector('[data-move="down"]').disabled = i === all.length - 1;
    });
  };

  let busy = false;
  async function move(tr, dir, button) {
    if (busy) return;
    const before = rows();
    const i = before.indexOf(tr);
    const j = dir === 'up' ? i - 1 : i + 1;
    if (j < 0 || j >= before.length) return;
    busy = true;
    if (dir === 'up') tbody.insertBefore(tr, before[j]);
    else tbody.insertBefore(before[j], tr);
    renumber();
    // the row moved in the DOM: keep the focus on its button, or on the other one at the ends
    (button.disabled ? tr.querySelector(`[data-move="${dir === 'up' ? 'down' : 'up'}"]`) : button).focus();
    const res = await plinth.api('PUT', `/bi/apps/${state.appId}/sheet-order`, { sheetIds: rows().map((r) => r.dataset.sheet) });
    busy = false;
    const name = byId.get(tr.dataset.sheet)?.name ?? '';
    if (res.ok) {
      for (const s of res.body.items) if (byId.has(s.id)) byId.get(s.id).version = s.version;
      say(text(dir === 'up' ? 'sheetsScript.movedUp' : 'sheetsScript.movedDown', { name, position: rows().indexOf(tr) + 1 }));
      return;
    }
    for (const r of before) tbody.append(r);
    renumber();
    fail(res, 'sheetsScript.reorderRefused', 'sheetsScript.reorderFailed');
  }

  const dialog = document.getElementById('delete-sheet-dialog');
  let deleting = null;
  function confirmDelete(tr) {
    const sheet = byId.get(tr.dataset.sheet);
    deleting = { tr, sheet };
    document.getElementById('delete-sheet-text').textContent = text('sheetsScript.deleteText', { name: sheet.name });
    dialog.showModal();
    dialog.querySelector('[data-cancel]').focus();
  }
  dialog.querySelector('[data-cancel]').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    if (deleting && !deleting.sent) deleting.tr.querySelector('[data-delete]').focus();
  });
  dialog.querySelector('[data-confirm]').addEventListener('click', async () => {
    const { tr, sheet } = deleting;
    deleting.sent = true;
    dialog.close();
    const res = await plinth.api('DELETE', `/bi/apps/${state.appId}/sheets/${sheet.id}`, undefined, { 'if-match': `"${sheet.version}"` });
    if (res.ok) return window.location.assign(`${window.location.pathname}?notice=deleted`);
    deleting.sent = false;
    tr.querySelector('[data-delete]').focus();
    fail(res, 'sheetsScript.deleteRefused', 'sheetsScript.deleteFailed', { name: sheet.name });
  });

  tbody.addEventListener('click', (event) => {
    const button = event.target.closest('button');
    const tr = button?.closest('tr[data-sheet]');
    if (!tr) return;
    if (button.dataset.move) move(tr, button.dataset.move, button);
    else if (button.hasAttribute('data-delete')) confirmDelete(tr);
  });

  const form = document.getElementById('new-sheet-form');
  form?.addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = form.elements.name;
    const error = document.getElementById('new-sheet-name-error');
    const show = (message) => {
      error.textContent = message;
      name.setAttribute('aria-invalid', message ? 'true' : 'false');
      if (message) name.focus();
    };
    if (!name.value.trim()) return show(text('sheetsScript.nameRequired'));
    show('');
    if (busy) return;
    busy = true;
    const description = form.elements.description.value.trim();
    const body = { name: name.value.trim(), position: rows().length, ...(description ? { description } : {}) };
    const res = await plinth.api('POST', `/bi/apps/${state.appId}/sheets`, body);
    busy = false;
    if (res.ok) return window.location.assign(`${window.location.pathname}?notice=created`);
    const fieldError = (res.body?.errors ?? []).find((e) => e.path === '/name');
    if (fieldError) return show(text('sheetsScript.nameInvalid', { message: fieldError.message }));
    fail(res, 'sheetsScript.addRefused', 'sheetsScript.addFailed');
  });
})();
