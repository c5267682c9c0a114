// A sheet's dashboard for its editors: "Rename" opens a small form in the
// widget's header (PATCH /bi/sheets/:id/widgets/:widgetId), "Remove" asks in
// the page's dialog first (DELETE). Both send the widget's version as If-Match:
// a 412 says someone changed the widget since the page loaded and offers a
// reload. A layout saved by dashboard.js gives every widget a new version
// (bi:saved); a removed widget leaves its grid (bi:remove), or the page if the
// grid has no script. Its texts come from the page (bi-texts, in the user's
// language); the English below only if that is missing.
(() => {
  const state = plinth.data('bi-dashboard');
  const container = document.getElementById('bi-grid');
  const dialog = document.getElementById('remove-widget-dialog');
  if (!state || !container || !dialog) return;
  const ENGLISH = {
    'dashboardScript.titleRequired': 'Give the widget a title.',
    'dashboardScript.titleInvalid': '{message}',
    'dashboardScript.renamed': 'Renamed to {title}.',
    'dashboardScript.renameRefused': 'You may not rename {title}: {detail}',
    'dashboardScript.renameFailed': '{title} was not renamed: {detail}',
    'dashboardScript.removeText': 'The widget {title} will be removed from this page. This cannot be undone.',
    'dashboardScript.removed': '{title} removed.',
    'dashboardScript.removeRefused': 'You may not remove {title}: {detail}',
    'dashboardScript.removeFailed': '{title} was not removed: {detail}',
    'dashboardScript.changed': 'Someone changed {title} since this page loaded. Reload the page to see it, then try again.',
    'dashboardScript.reload': 'Reload the page',
    'scripts.serverAnswered': 'the server answered {status}',
  };
  const text = plinth.texts(plinth.data('bi-texts') ?? ENGLISH);
  const status = document.getElementById('layout-status');
  const alertBox = document.getElementById('layout-error');
  const versions = new Map(state.widgets.map((w) => [w.id, w.version]));
  const titleOf = (section) => section.querySelector('h2').textContent;
  let busy = false;

  container.addEventListener('bi:saved', (event) => {
    for (const w of event.detail) versions.set(w.id, w.version);
  });

  const say = (message) => {
    alertBox.replaceChildren();
    status.textContent = message;
  };
  /** The API's refusal in the alert: a changed widget (412) with a reload, a 403 as `refused`'s text, the rest as `failed`'s. */
  function fail(res, title, refused, failed) {
    status.textContent = '';
    const body = res.body || {};
    const detail = body.detail || body.title || text('scripts.serverAnswered', { status: res.status });
    const p = Object.assign(document.createElement('p'), { textContent: text(res.status === 412 ? 'dashboardScript.changed' : res.status === 403 ? refused : failed, { title, detail }) });
    const box = Object.assign(document.createElement('div'), { className: 'alert' });
    box.append(p);
    if (res.status === 412) {
      const reload = Object.assign(document.createElement('button'), { type: 'button', className: 'secondary', textContent: text('dashboardScript.reload') });
      reload.addEventListener('click', () => window.location.reload());
      box.append(reload);
    }
    alertBox.replaceChildren(box);
  }

  for (const el of container.querySelectorAll('.bi-edit')) el.hidden = false;

  // rename: the header's form in place of the title and its buttons
  function openRename(section) {
    const form = section.querySelector('[data-rename]');
    form.elements.title.value = titleOf(section);
    showError(form, '');
    form.hidden = false;
    section.querySelector('h2').hidden = true;
    section.querySelector('.bi-tools').hidden = true;
    form.elements.title.select();
    form.elements.title.focus();
  }
  function closeRename(section) {
    section.querySelector('[data-rename]').hidden = true;
    section.querySelector('h2').hidden = false;
    section.querySelector('.bi-tools').hidden = false;
    section.querySelector('[data-rename-open]').focus();
  }
  function showError(form, message) {
    const input = form.elements.title;
    document.getElementById(`${input.id}-error`).textContent = message;
    input.setAttribute('aria-invalid', message ? 'true' : 'false');
    if (message) input.focus();
  }
  /** The widget's new title in its heading and in every label that names it. */
  function retitle(section, title) {
    section.querySelector('h2').textContent = title;
    for (const el of section.querySelectorAll('[data-label]')) {
      const label = plinth.fillIn(el.dataset.label, { title });
      if (el.matches('label, caption')) el.textContent = label;
      else el.setAttribute('aria-label', label);
    }
  }
  async function rename(section, form) {
    const title = form.elements.title.value.trim();
    if (!title) return showError(form, text('dashboardScript.titleRequired'));
    if (busy) return;
    showError(form, '');
    const id = section.dataset.widget;
    const before = titleOf(section);
    busy = true;
    const res = await plinth.api('PATCH', `/bi/sheets/${state.sheetId}/widgets/${id}`, { title }, { 'if-match': `"${versions.get(id)}"` });
    busy = false;
    if (res.ok) {
      versions.set(id, res.body.version);
      retitle(section, res.body.title ?? title);
      closeRename(section);
      return say(text('dashboardScript.renamed', { title: titleOf(section) }));
    }
    const fieldError = (res.body?.errors ?? []).find((e) => e.path === '/title');
    if (fieldError) return showError(form, text('dashboardScript.titleInvalid', { message: fieldError.message }));
    fail(res, before, 'dashboardScript.renameRefused', 'dashboardScript.renameFailed');
    form.elements.title.focus();
  }

  container.addEventListener('submit', (event) => {
    const form = event.target.closest('[data-rename]');
    if (!form) return;
    event.preventDefault();
    rename(form.closest('[data-widget]'), form);
  });
  container.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && event.target.closest('[data-rename]')) {
      event.preventDefault();
      closeRename(event.target.closest('[data-widget]'));
    }
  });

  // remove: the dialog asks first
  let removing = null;
  function confirmRemove(section) {
    removing = { section, sent: false };
    document.getElementById('remove-widget-text').textContent = text('dashboardScript.removeText', { title: titleOf(section) });
    dialog.showModal();
    dialog.querySelector('[data-cancel]').focus();
  }
  dialog.querySelector('[data-cancel]').addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    if (removing && !removing.sent) removing.section.querySelector('[data-remove]').focus();
  });
  dialog.querySelector('[data-confirm]').addEventListener('click', async () => {
    if (!removing || busy) return;
    const { section } = removing;
    const id = section.dataset.widget;
    const title = titleOf(section);
    removing.sent = true;
    dialog.close();
    busy = true;
    const res = await plinth.api('DELETE', `/bi/sheets/${state.sheetId}/widgets/${id}`, undefined, { 'if-match': `"${versions.get(id)}"` });
    busy = false;
    if (!res.ok) {
      removing.sent = false;
      section.querySelector('[data-remove]').focus();
      return fail(res, title, 'dashboardScript.removeRefused', 'dashboardScript.removeFailed');
    }
    // the focus goes to the next widget in reading order, else the previous one
    const sections = [...container.querySelectorAll('[data-widget]')];
    const i = sections.indexOf(section);
    const next = sections[i + 1] ?? sections[i - 1];
    versions.delete(id);
    if (container.dispatchEvent(new window.CustomEvent('bi:remove', { detail: section, cancelable: true }))) section.closest('.grid-stack-item').remove();
    removing = null;
    if (next) next.focus();
    else {
      container.hidden = true;
      document.getElementById('bi-empty').hidden = false;
    }
    say(text('dashboardScript.removed', { title }));
  });

  container.addEventListener('click', (event) => {
    const button = event.target.closest('button');
    const section = button?.closest('[data-widget]');
    if (!section) return;
    if (button.hasAttribute('data-rename-open')) openRename(section);
    else if (button.hasAttribute('data-rename-cancel')) closeRename(section);
    else if (button.hasAttribute('data-remove')) confirmRemove(section);
  });
})();
