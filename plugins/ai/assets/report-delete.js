// A report's delete and archive pages: "Delete" (DELETE /api/ai/reports/:id,
// with ?force=true only when the page named its runs), "Archive" (instead)
// and "Restore" (POST /api/ai/reports/:id/archive or /unarchive), then to the
// reports or the report. Its words come from the page (#ai-report-texts),
// English without them.
document.addEventListener('DOMContentLoaded', () => {
  const data = plinth.data('ai-report-data');
  if (!data) return;
  const ENGLISH = {
    deleting: 'Deleting the report…',
    archiving: 'Archiving the report…',
    restoring: 'Restoring the report…',
    notDeleted: 'Nothing was changed: {reason}',
    unreachable: 'the server could not be reached',
    serverAnswered: 'the server answered {status}',
  };
  const T = { ...ENGLISH, ...(plinth.data('ai-report-texts') ?? {}) };
  const status = document.getElementById('ai-report-status');
  const errorBox = document.getElementById('ai-report-error');
  const buttons = document.querySelectorAll('main button');
  const id = encodeURIComponent(data.id);
  const report = `/ai/reports/${id}`;

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

  document.getElementById('ai-delete')?.addEventListener('submit', (event) => {
    event.preventDefault();
    const query = data.runs > 0 ? '?force=true' : '';
    act(T.deleting, () => plinth.api('DELETE', `${report}${query}`, undefined, { 'if-match': `"${data.version}"` }), '/ai/reports?notice=deleted');
  });
  document.getElementById('ai-archive-button')?.addEventListener('click', () => act(T.archiving, () => plinth.api('POST', `${report}/archive`), `${report}?notice=saved`));
  document.getElementById('ai-restore-button')?.addEventListener('click', () => act(T.restoring, () => plinth.api('POST', `${report}/unarchive`), `${report}?notice=saved`));
});
