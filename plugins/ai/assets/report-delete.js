// "Delete" and "Archive instead" on a report's delete page: DELETE
// /api/ai/reports/:id (with ?force=true only when the page named its runs)
// or POST /api/ai/reports/:id/archive, then back to the reports or the report.
// Its words come from the page (#ai-delete-texts), English without them.
document.addEventListener('DOMContentLoaded', () => {
  const form = document.getElementById('ai-delete');
  const data = plinth.data('ai-delete-data');
  if (!form || !data) return;
  const ENGLISH = {
    deleting: 'Deleting the report…',
    archiving: 'Archiving the report…',
    notDeleted: 'Nothing was changed: {reason}',
    unreachable: 'the server could not be reached',
    serverAnswered: 'the server answered {status}',
  };
  const T = { ...ENGLISH, ...(plinth.data('ai-delete-texts') ?? {}) };
  const status = document.getElementById('ai-delete-status');
  const errorBox = document.getElementById('ai-delete-error');
  const buttons = form.querySelectorAll('button');
  const id = encodeURIComponent(data.id);

  const act = async (working, call, next) => {
    errorBox.className = '';
    errorBox.replaceChildren();
    for (const b of buttons) b.disabled = true;
    status.textContent = working;
    let reason;
    let detail = null;
    try {
      const res = await call();
      if (res.ok) return window.location.assign(next);
      reason = res.body?.title ?? plinth.fillIn(T.serverAnswered, { status: res.status });
      detail = res.body?.detail ?? null;
    } catch {
      reason = T.unreachable;
    }
    status.textContent = '';
    for (const b of buttons) b.disabled = false;
    errorBox.className = 'alert';
    const parts = [Object.assign(document.createElement('strong'), { textContent: plinth.fillIn(T.notDeleted, { reason }) })];
    if (detail) parts.push(Object.assign(document.createElement('p'), { textContent: detail }));
    errorBox.replaceChildren(...parts);
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const query = data.runs > 0 ? '?force=true' : '';
    act(T.deleting, () => plinth.api('DELETE', `/ai/reports/${id}${query}`, undefined, { 'if-match': `"${data.version}"` }), '/ai/reports?notice=deleted');
  });
  document.getElementById('ai-archive-button')?.addEventListener('click', () => {
    act(T.archiving, () => plinth.api('POST', `/ai/reports/${id}/archive`), `/ai/reports/${id}?notice=saved`);
  });
});
