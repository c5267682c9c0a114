// "Run now" on a report's run page: POST /api/ai/reports/:id/run over the
// range given (the console's dates are UTC), then open the run with its result.
document.addEventListener('DOMContentLoaded', () => {
  const form = document.getElementById('ai-run');
  const data = plinth.data('ai-run-data');
  if (!form || !data) return;
  const status = document.getElementById('ai-run-status');
  const errorBox = document.getElementById('ai-run-error');
  const button = document.getElementById('ai-run-button');
  /** datetime-local ("2026-11-01T08:00") → an instant in UTC */
  const instant = (value) => (value ? `${value.length === 16 ? `${value}:00` : value}Z` : undefined);

  const fail = (title, detail, errors = []) => {
    errorBox.className = 'alert';
    const parts = [Object.assign(document.createElement('strong'), { textContent: title })];
    if (detail) parts.push(Object.assign(document.createElement('p'), { textContent: detail }));
    for (const e of errors) {
      parts.push(Object.assign(document.createElement('p'), { textContent: `${e.path.replace(/^\//, '')}: ${e.message}` }));
      form.querySelector(`[name="${e.path.replace(/^\//, '')}"]`)?.setAttribute('aria-invalid', 'true');
    }
    errorBox.replaceChildren(...parts);
  };

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    errorBox.className = '';
    errorBox.replaceChildren();
    for (const f of form.querySelectorAll('[aria-invalid]')) f.removeAttribute('aria-invalid');
    const body = { from: instant(form.elements.from.value), to: instant(form.elements.to.value) };
    if (body.from && body.to && body.from > body.to) {
      fail('The start of the range is after its end.', null, [{ path: '/from', message: 'must be before the end' }]);
      form.elements.from.focus();
      return;
    }
    button.disabled = true;
    status.textContent = 'Running the report…';
    try {
      const res = await plinth.api('POST', `/ai/reports/${encodeURIComponent(data.id)}/run`, body);
      if (res.ok) {
        status.textContent = res.body.status === 'failed' ? 'The run failed; opening it.' : 'The report ran; opening its result.';
        window.location.assign(`/ai/reports/history/${encodeURIComponent(res.body.id)}?ran=1`);
        return;
      }
      status.textContent = '';
      fail(`The report did not run: ${res.body?.title ?? `the server answered ${res.status}`}`, res.body?.detail, res.body?.errors ?? []);
    } catch {
      status.textContent = '';
      fail('The report did not run: the server could not be reached.');
    } finally {
      button.disabled = false;
    }
  });
});
