// "Save the query" under an analytics result: posts the query that answered
// (the page's, then each run's, announced by analytics.js as a bi:result event,
// without app: a saved query reads its own application's sources) as a saved
// query of the chosen application (POST /bi/apps/:id/queries) and links that
// application's data page, where it is listed. What the API refuses: its
// problem in the alert, its field errors beside their inputs. Its texts come
// from the page (bi-texts, in the user's language); the English below only if
// that is missing.
(() => {
  const state = plinth.data('bi-analytics');
  const form = document.getElementById('bi-save-form');
  if (!state?.save || !form) return;
  const ENGLISH = {
    'saveQueryScript.nameRequired': 'Give the query a name.',
    'saveQueryScript.saving': 'Saving the query…',
    'saveQueryScript.saved': '{name} was saved in {app}.',
    'saveQueryScript.open': 'See the data of {app}',
    'saveQueryScript.refused': 'You may not save a query in {app}: {detail}',
    'saveQueryScript.failed': 'The query was not saved: {detail}',
    'result.errorAt': '{control}: {message}',
    'result.query': 'Query',
    'scripts.serverAnswered': 'the server answered {status}',
  };
  const text = plinth.texts(plinth.data('bi-texts') ?? ENGLISH);
  const $ = (id) => document.getElementById(id);
  const [name, description] = ['bi-save-name', 'bi-save-description'].map($);
  const status = $('bi-save-status');
  const alertBox = $('bi-save-error');
  const button = form.querySelector('button[type="submit"]');
  /** the inputs the API's error paths are about */
  const INPUTS = { '/name': name, '/description': description };
  const where = { app: state.save.appName };
  let query = state.query;
  let busy = false;

  form.hidden = false;

  const { clear: clearProblems, fieldError, place } = window.biFormProblems(alertBox, INPUTS);

  document.addEventListener('bi:result', (event) => {
    query = event.detail?.query ?? null;
    status.replaceChildren();
    clearProblems();
  });

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (busy || !query) return;
    clearProblems();
    status.replaceChildren();
    const title = name.value.trim();
    if (!title) {
      fieldError(name, text('saveQueryScript.nameRequired'));
      return name.focus();
    }
    const about = description.value.trim();
    busy = true;
    // not disabled: a disabled button would drop the keyboard's focus
    button.setAttribute('aria-disabled', 'true');
    status.textContent = text('saveQueryScript.saving');
    const res = await plinth.api('POST', `/bi/apps/${state.save.appId}/queries`, { name: title, ...(about ? { description: about } : {}), query }).finally(() => {
      busy = false;
      button.removeAttribute('aria-disabled');
    });
    if (res.ok) {
      const link = Object.assign(document.createElement('a'), { href: state.save.dataUrl, textContent: text('saveQueryScript.open', where) });
      status.replaceChildren(`${text('saveQueryScript.saved', { ...where, name: res.body.name || title })} `, link);
      name.value = '';
      description.value = '';
      return;
    }
    status.replaceChildren();
    const problem = res.body && typeof res.body === 'object' ? res.body : {};
    const detail = problem.detail || problem.title || text('scripts.serverAnswered', { status: res.status });
    const box = Object.assign(document.createElement('div'), { className: 'alert' });
    box.append(Object.assign(document.createElement('p'), { textContent: text(res.status === 403 ? 'saveQueryScript.refused' : 'saveQueryScript.failed', { ...where, detail }) }));
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
