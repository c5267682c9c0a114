// The board's moves: drag a card to another column, or choose a status in the
// card's "Move to" select and press Move. Either way the task's status changes
// through PATCH /pm/tasks/:id with If-Match of the card's version; a refused
// move puts the card back where it was and says why in the alert. What it says
// are the module's texts in the user's language, which the page passes in its
// JSON (pages/board.ts, SCRIPT_TEXTS); the English here only if the page has none.
document.addEventListener('DOMContentLoaded', () => {
  const board = document.querySelector('.pm-board');
  if (!board) return;
  const ENGLISH = {
    'board.move.moved': '{ref} moved to {status}.',
    'board.move.unknownStatus': 'that status',
    'board.move.stale': '{ref} was changed by someone else after the board was loaded, so it stays where it was.',
    'board.move.reload': 'Reload the board',
    'board.move.forbidden': 'You may not move {ref}.',
    'board.move.forbiddenWhy': 'You may not move {ref}: {detail}',
    'board.move.refused': '{ref} cannot move to {status}.',
    'board.move.refusedWhy': '{ref} cannot move to {status}: {detail}',
    'board.move.failed': '{ref} could not be moved ({code}). Try again.',
    'board.move.noAnswer': 'no answer',
  };
  const data = plinth.data('pm-board');
  const names = data?.statuses ?? {};

  /** the text of `key` with its {placeholders} filled in; one left without a value stays as written */
  const say = plinth.texts(data?.texts ?? ENGLISH, ENGLISH);
  const alertBox = document.getElementById('pm-board-alert');
  const statusBox = document.getElementById('pm-board-status');
  const columns = () => [...board.querySelectorAll('.pm-column')];
  const columnOf = (statusId) => columns().find((c) => c.dataset.statusId === statusId);
  const cardOf = (el) => (el && typeof el.closest === 'function' ? el.closest('.pm-card') : null);
  const targetsOf = (card) => [...card.querySelectorAll('select[data-move] option')].map((o) => o.value);

  function recount() {
    for (const column of columns()) {
      const n = column.querySelectorAll('.pm-cards > .pm-card').length;
      column.querySelector('[data-count]').textContent = String(n);
      column.querySelector('[data-empty]').hidden = n > 0;
    }
  }

  function refuse(text, reload) {
    alertBox.textContent = text;
    if (reload) {
      const link = document.createElement('a');
      link.href = window.location.pathname + window.location.search;
      link.textContent = say('board.move.reload');
      alertBox.append(' ', link);
    }
    alertBox.hidden = false;
  }

  function refusal(res, ref, status) {
    const detail = res.body && typeof res.body === 'object' ? res.body.detail || res.body.title : '';
    if (res.status === 412) return say('board.move.stale', { ref });
    if (res.status === 403) return detail ? say('board.move.forbiddenWhy', { ref, detail }) : say('board.move.forbidden', { ref });
    if (res.status === 409 || res.status === 422) return detail ? say('board.move.refusedWhy', { ref, status, detail }) : say('board.move.refused', { ref, status });
    return say('board.move.failed', { ref, code: res.status || say('board.move.noAnswer') });
  }

  /** The card's select offers what the API now allows; without any move the card stays put. */
  async function refreshMoves(card) {
    const res = await plinth.api('GET', `/pm/tasks/${card.dataset.taskId}/transitions`);
    const select = card.querySelector('select[data-move]');
    const statuses = res.ok ? res.body.items : [];
    if (!statuses.length) {
      card.querySelector('.pm-move')?.remove();
      card.removeAttribute('draggable');
      return;
    }
    select.replaceChildren(...statuses.map((s) => Object.assign(document.createElement('option'), { value: s.id, textContent: s.name })));
  }

  async function move(card, statusId, byKeyboard) {
    const target = columnOf(statusId);
    if (!target || card.classList.contains('pm-busy')) return;
    const from = card.parentElement;
    const next = card.nextElementSibling;
    const ref = card.dataset.ref;
    const status = names[statusId] ?? say('board.move.unknownStatus');
    // taking the card out of the page takes the focus with it: a keyboard user gets it back on the card
    const refocus = () => {
      if (byKeyboard && (!document.activeElement || document.activeElement === document.body)) (card.querySelector('select[data-move]') ?? card.querySelector('a')).focus();
    };
    alertBox.hidden = true;
    card.classList.add('pm-busy');
    target.querySelector('.pm-cards').append(card);
    recount();
    refocus();
    const res = await plinth.api('PATCH', `/pm/tasks/${card.dataset.taskId}`, { statusId }, { 'if-match': `"${card.dataset.version}"` }).catch(() => ({ ok: false, status: 0, body: null }));
    if (res.ok) {
      card.dataset.version = String(res.body.version);
      if (['done', 'cancelled'].includes(res.body.category)) {
        card.querySelector('[data-overdue]')?.remove();
        card.querySelector('[data-due]')?.classList.remove('pm-overdue');
      }
      statusBox.textContent = say('board.move.moved', { ref, status });
      await refreshMoves(card);
    } else {
      from.insertBefore(card, next && next.parentElement === from ? next : null);
      recount();
      refocus();
      refuse(refusal(res, ref, status), res.status === 412);
    }
    card.classList.remove('pm-busy');
    refocus();
  }

  board.addEventListener('click', (event) => {
    const button = event.target.closest?.('[data-move-button]');
    const card = cardOf(button);
    const select = card?.querySelector('select[data-move]');
    if (select?.value) move(card, select.value, true);
  });

  let dragged = null;
  const columnAt = (event) => (typeof event.target.closest === 'function' ? event.target.closest('.pm-column') : null);
  board.addEventListener('dragstart', (event) => {
    const card = cardOf(event.target);
    if (!card || card.getAttribute('draggable') !== 'true') return;
    dragged = card;
    event.dataTransfer.effectAllowed = 'move';
    event.dataTransfer.setData('text/plain', card.dataset.ref);
    card.classList.add('pm-dragging');
    for (const id of targetsOf(card)) columnOf(id)?.classList.add('pm-drop-allowed');
  });
  board.addEventListener('dragend', () => {
    dragged?.classList.remove('pm-dragging');
    dragged = null;
    for (const column of columns()) column.classList.remove('pm-drop-allowed', 'pm-drop-over');
  });
  board.addEventListener('dragover', (event) => {
    const column = columnAt(event);
    if (!dragged || !column?.classList.contains('pm-drop-allowed')) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'move';
    for (const c of columns()) c.classList.toggle('pm-drop-over', c === column);
  });
  board.addEventListener('drop', (event) => {
    const column = columnAt(event);
    if (!dragged || !column?.classList.contains('pm-drop-allowed')) return;
    event.preventDefault();
    move(dragged, column.dataset.statusId, false);
  });
});
