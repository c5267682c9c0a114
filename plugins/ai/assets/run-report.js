// "Run now" on a report's run page: POST /api/ai/reports/:id/run over the
// range given (the console's dates are UTC), then open the run with its result.
// Its words come from the page (#ai-run-texts), English without them.
document.addEventListener('DOMContentLoaded', () => {
  const form = document.getElementById('ai-run');
  const data = plinth.data('ai-run-data');
  if (!form || !data) return;
  const ENGLISH = {
    rangeBackwards: 'The start of the range is after its end.',
    fromBeforeTo: 'must be before the end',
    running: 'Running the report…',
    openingFailed: 'The run failed; opening it.',
    openingResult: 'The report ran; opening its result.',
    notRun: 'The report did not run: {reason}',
    notRunUnreachable: 'The report did not run: the server could not be reached.',
    serverAnswered: 'the server answered {status}',
  };
  const T = { ...ENGLISH, ...(plinth.data('ai-run-texts') ?? {}) };
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
      fail(T.rangeBackwards, null, [{ path: '/from', message: T.fromBeforeTo }]);
      form.elements.from.focus();
      return;
    }
    button.disabled = true;
    status.textContent = T.running;
    try {
      const res = await plinth.api('POST', `/ai/reports/${encodeURIComponent(data.id)}/run`, body);
      if (res.ok) {
        status.textContent = res.body.status === 'failed' ? T.openingFailed : T.openingResult;
        window.location.assign(`/ai/reports/history/${encodeURIComponent(res.body.id)}?ran=1`);
        return;
      }
      status.textContent = '';
      fail(plinth.fillIn(T.notRun, { reason: res.body?.title ?? plinth.fillIn(T.serverAnswered, { status: res.status }) }), res.body?.detail, res.body?.errors ?? []);
    } catch {
      status.textContent = '';
      fail(T.notRunUnreachable);
    } finally {
      button.disabled = false;
    }
  });
});
