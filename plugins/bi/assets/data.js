// The data of a BI application: add a data source, change one (PATCH with
// If-Match of the version the page showed; an empty password keeps the stored
// one), test one again (refresh) and delete a source or a saved query after a
// confirmation. The API tests a source on every save: its problem goes in the
// page's alert, its field errors beside their inputs. After a change the page
// loads again with a notice. Its texts come from the page (bi-texts, in the
// user's language); the English below only if that is missing.
(() => {
  const state = plinth.data('bi-data');
  if (!state) return;
  const ENGLISH = {
    'dataScript.changeHeading': 'Change the data source {name}',
    'dataScript.save': 'Save and test',
    'dataScript.passwordKept': 'Stored encrypted, never shown. Leave it empty to keep the stored password.',
    'dataScript.nameRequired': 'Give the data source a name.',
    'dataScript.urlRequired': 'Give the URL of the database.',
    'dataScript.schemaRequired': 'Name the schema to read.',
    'dataScript.testing': 'Testing the connection…',
    'dataScript.addRefused': 'You may not add a data source here: {detail}',
    'dataScript.addFailed': 'The data source was not added: {detail}',
    'dataScript.changeRefused': 'You may not change {name}: {detail}',
    'dataScript.changeFailed': '{name} was not changed: {detail}',
    'dataScript.nothingChanged': 'Nothing to save: no field of {name} changed.',
    'dataScript.stale': 'Someone changed {name} since this page loaded. Reload the page to see it, then try again.',
    'dataScript.reload': 'Reload the page',
    'dataScript.refreshing': 'Testing {name} again…',
    'dataScript.refreshRefused': 'You may not refresh {name}: {detail}',
    'dataScript.refreshFailed': 'Could not refresh {name}: {detail}',
    'dataScript.deleteSourceTitle': 'Delete this data source?',
    'dataScript.deleteSourceText': 'The data source {name} will be deleted; widgets and saved queries that read its tables will fail. This cannot be undone.',
    'dataScript.deleteQueryTitle': 'Delete this saved query?',
    'dataScript.deleteQueryText': 'The saved query {name} will be deleted. This cannot be undone.',
    'dataScript.deleteRefused': 'You may not delete {name}: {detail}',
    'dataScript.deleteFailed': 'Could not delete {name}: {detail}',
    'dataScript.errorAt': '{field}: {message}',
    'scripts.serverAnswered': 'the server answered {status}',
  };
  const text = plinth.texts(plinth.data('bi-texts') ?? ENGLISH);
  const $ = (id) => document.getElementById(id);
  const status = $('data-status');
  const alertBox = $('data-error');
  const sources = new Map(state.sources.map((s) => [s.id, s]));
  const queries = new Map(state.queries.map((q) => [q.id, q]));
  const sourcesUrl = `/bi/apps/${state.appId}/data-sources`;
  let busy = false;

  /** The page again, with the notice a change asks for. */
  const reload = (params) => window.location.assign(`${window.location.pathname}?${new URLSearchParams(params)}`);
  const say = (message) => {
    alertBox.replaceChildren();
    status.textContent = message;
  };
  const detailOf = (res) => {
    const body = res.body && typeof res.body === 'object' ? res.body : {};
    return body.detail || body.title || text('scripts.serverAnswered', { status: res.status });
  };
  /** The API's refusal (403: `refused`'s text), a stale version (412) or another failure (`failed`'s) in the alert; `extra`: more lines. */
  function fail(res, refused, failed, values, extra = []) {
    status.textContent = '';
    const box = Object.assign(document.createElement('div'), { className: 'alert' });
    if (res.status === 412) {
      const again = Object.assign(document.createElement('button'), { type: 'button', className: 'secondary', textContent: text('dataScript.reload') });
      again.addEventListener('click', () => window.location.reload());
      box.append(Object.assign(document.createElement('p'), { textContent: text('dataScript.stale', values) }), again);
    } else {
      box.append(Object.assign(document.createElement('p'), { textContent: text(res.status === 403 ? refused : failed, { ...values, detail: detailOf(res) }) }));
    }
    if (extra.length) {
      const list = document.createElement('ul');
      for (const line of extra) list.append(Object.assign(document.createElement('li'), { textContent: line }));
      box.append(list);
    }
    alertBox.replaceChildren(box);
  }
  /** While a call runs: the button says so without losing the keyboard's focus (a disabled one would). */
  async function running(button, call) {
    busy = true;
    button?.setAttribute('aria-disabled', 'true');
    try {
      return await call();
    } finally {
      busy = false;
      button?.removeAttribute('aria-disabled');
    }
  }

  for (const el of document.querySelectorAll('[data-refresh], [data-change], [data-delete], #source-editor')) el.hidden = false;

  // add or change a source: one form, in the mode of the source being changed (or none)
  const form = $('source-form');
  const heading = $('source-form-heading');
  const submit = form?.querySelector('button[type="submit"]');
  const cancel = form?.querySelector('[data-cancel-change]');
  const passwordHint = $('source-password-hint');
  const initial = form && { heading: heading.textContent, submit: submit.textContent, passwordHint: passwordHint.textContent };
  /** the inputs the API's error paths are about */
  const INPUTS = form
    ? { '/name': form.elements.name, '/url': form.elements.url, '/password': form.elements.password, '/schemaName': form.elements.schemaName, '/sslMode': form.elements.sslMode }
    : {};
  let editing = null;

  const { clear: clearProblems, fieldError, place } = window.biFormProblems(alertBox, INPUTS);
  function setMode(source) {
    editing = source;
    clearProblems();
    status.textContent = '';
    const f = form.elements;
    f.name.value = source?.name ?? '';
    f.url.value = source?.url ?? '';
    f.password.value = '';
    f.schemaName.value = source?.schemaName ?? 'public';
    f.sslMode.value = source?.sslMode ?? 'require';
    heading.textContent = source ? text('dataScript.changeHeading', { name: source.name }) : initial.heading;
    submit.textContent = source ? text('dataScript.save') : initial.submit;
    passwordHint.textContent = source ? text('dataScript.passwordKept') : initial.passwordHint;
    cancel.hidden = !source;
  }
  cancel?.addEventListener('click', () => {
    const id = editing?.id;
    setMode(null);
    document.querySelector(`tr[data-source="${id}"] [data-change]`)?.focus();
  });

  /** The body to send: every field for a new source; for a change only what differs (and a password when one is typed). */
  function bodyOf() {
    const f = form.elements;
    const values = { name: f.name.value.trim(), url: f.url.value.trim(), schemaName: f.schemaName.value.trim(), sslMode: f.sslMode.value };
    const password = f.password.value;
    if (!editing) return { ...values, ...(password ? { password } : {}) };
    const changed = Object.fromEntries(Object.entries(values).filter(([k, v]) => v !== editing[k]));
    return { ...changed, ...(password ? { password } : {}) };
  }

  form?.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (busy) return;
    clearProblems();
    const f = form.elements;
    const missing = [
      [f.name, 'dataScript.nameRequired'],
      [f.url, 'dataScript.urlRequired'],
      [f.schemaName, 'dataScript.schemaRequired'],
    ].filter(([input]) => !input.value.trim());
    if (missing.length) {
      for (const [input, key] of missing) fieldError(input, text(key));
      return missing[0][0].focus();
    }
    const body = bodyOf();
    const source = editing;
    if (source && !Object.keys(body).length) return say(text('dataScript.nothingChanged', { name: source.name }));
    say(text('dataScript.testing'));
    const res = await running(submit, () => (source ? plinth.api('PATCH', `${sourcesUrl}/${source.id}`, body, { 'if-match': `"${source.version}"` }) : plinth.api('POST', sourcesUrl, body)));
    if (res.ok) return reload({ notice: source ? 'changed' : 'added', source: res.body.id });
    const values = { name: source?.name ?? '' };
    const { first, others } = place(res.body && res.body.errors);
    const lines = others.map((e) => text('dataScript.errorAt', { field: e.path, message: e.message }));
    fail(res, source ? 'dataScript.changeRefused' : 'dataScript.addRefused', source ? 'dataScript.changeFailed' : 'dataScript.addFailed', values, lines);
    first?.focus();
  });

  async function refresh(source, button) {
    if (busy) return;
    say(text('dataScript.refreshing', { name: source.name }));
    const res = await running(button, () => plinth.api('POST', `${sourcesUrl}/${source.id}/refresh`));
    // a failed test is recorded on the source: the page shows it with its reason
    if (res.ok || res.status === 422) return reload({ notice: res.ok ? 'refreshed' : 'refreshFailed', source: source.id });
    fail(res, 'dataScript.refreshRefused', 'dataScript.refreshFailed', { name: source.name });
  }

  // delete a source or a saved query, after a confirmation
  const dialog = $('data-delete-dialog');
  let deleting = null;
  function confirmDelete(button, item, kind) {
    deleting = { button, item, kind };
    $('data-delete-title').textContent = text(kind === 'source' ? 'dataScript.deleteSourceTitle' : 'dataScript.deleteQueryTitle');
    $('data-delete-text').textContent = text(kind === 'source' ? 'dataScript.deleteSourceText' : 'dataScript.deleteQueryText', { name: item.name });
    dialog.showModal();
    dialog.querySelector('[data-cancel]').focus();
  }
  dialog.querySelector('[data-cancel]').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    if (deleting && !deleting.sent) deleting.button.focus();
  });
  dialog.querySelector('[data-confirm]').addEventListener('click', async () => {
    const { button, item, kind } = deleting;
    deleting.sent = true;
    dialog.close();
    const url = kind === 'source' ? `${sourcesUrl}/${item.id}` : `/bi/apps/${state.appId}/queries/${item.id}`;
    const res = await running(button, () => plinth.api('DELETE', url, undefined, { 'if-match': `"${item.version}"` }));
    if (res.ok) return reload({ notice: kind === 'source' ? 'deleted' : 'queryDeleted' });
    deleting.sent = false;
    button.focus();
    fail(res, 'dataScript.deleteRefused', 'dataScript.deleteFailed', { name: item.name });
  });

  $('sources').addEventListener('click', (event) => {
    const button = event.target.closest('button');
    const source = sources.get(button?.closest('tr[data-source]')?.dataset.source);
    if (!source || busy) return;
    if (button.hasAttribute('data-refresh')) refresh(source, button);
    else if (button.hasAttribute('data-change')) {
      setMode(source);
      form.elements.name.focus();
    } else if (button.hasAttribute('data-delete')) confirmDelete(button, source, 'source');
  });
  $('queries').addEventListener('click', (event) => {
    const button = event.target.closest('button[data-delete]');
    const query = queries.get(button?.closest('tr[data-query]')?.dataset.query);
    if (query && !busy) confirmDelete(button, query, 'query');
  });
})();
