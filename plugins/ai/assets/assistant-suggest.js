// Completions as one types in the assistant's request (GET
// /api/ai/assistant/suggest): after "@" people, after "#" projects, else the
// titles of one's recent tasks. They are buttons: Down arrow from the text box
// reaches them, arrows move between them, Escape returns, Enter inserts.
// Its words come from the page (#ai-assistant-texts), English without them.
document.addEventListener('DOMContentLoaded', () => {
  const text = document.getElementById('ai-text');
  const list = document.getElementById('ai-suggestions');
  const status = document.getElementById('ai-suggest-status');
  if (!text || !list) return;
  const ENGLISH = {
    insert: 'Insert {value}',
    suggestedTitles: '{count} recent titles suggested; Down arrow to choose.',
    suggestedPeople: '{count} people suggested; Down arrow to choose.',
    suggestedProjects: '{count} projects suggested; Down arrow to choose.',
  };
  const T = { ...ENGLISH, ...(plinth.data('ai-assistant-texts') ?? {}) };
  const WAIT_MS = 200;
  let timer = null;
  let asked = 0;

  /** what is being typed: the @word or #word before the caret, else the whole request when short */
  const typed = () => {
    const before = text.value.slice(0, text.selectionStart ?? text.value.length);
    const word = /(^|\s)([@#][^\s@#]*)$/.exec(before);
    if (word) return { q: word[2], start: before.length - word[2].length, end: before.length };
    const whole = text.value.trim();
    if (whole.length >= 3 && whole.length <= 60 && !/[@#]/.test(whole)) return { q: whole, start: 0, end: text.value.length, kind: 'title' };
    return null;
  };

  const hide = () => {
    list.hidden = true;
    list.replaceChildren();
    status.textContent = '';
  };

  const insert = (at, value) => {
    const after = text.value.slice(at.end);
    const glue = after.startsWith(' ') ? '' : ' ';
    text.value = text.value.slice(0, at.start) + value + glue + after;
    const caret = at.start + value.length + glue.length;
    hide();
    text.focus();
    text.setSelectionRange(caret, caret);
  };

  const show = (at, items) => {
    if (!items.length) return hide();
    list.replaceChildren(
      ...items.map((s) => {
        const li = document.createElement('li');
        const button = document.createElement('button');
        button.type = 'button';
        button.textContent = s.detail && s.detail !== s.label ? `${s.label} (${s.detail})` : s.label;
        button.setAttribute('aria-label', plinth.fillIn(T.insert, { value: s.insert }));
        button.addEventListener('click', () => insert(at, s.insert));
        li.append(button);
        return li;
      }),
    );
    list.hidden = false;
    const told = at.kind === 'title' ? T.suggestedTitles : at.q.startsWith('@') ? T.suggestedPeople : T.suggestedProjects;
    const message = plinth.fillIn(told, { count: items.length });
    // told once, not again at every keystroke that finds as many
    if (status.textContent !== message) status.textContent = message;
  };

  const suggest = async () => {
    const at = typed();
    if (!at) return hide();
    const mine = ++asked;
    const query = new URLSearchParams({ q: at.q.slice(0, 100), limit: '6', ...(at.kind ? { kind: at.kind } : {}) });
    const res = await plinth.api('GET', `/ai/assistant/suggest?${query}`);
    // an answer overtaken by a later keystroke is dropped
    if (mine !== asked) return;
    if (res.ok) show(at, res.body.items);
    else hide();
  };

  text.addEventListener('input', () => {
    window.clearTimeout(timer);
    timer = window.setTimeout(() => suggest().catch(hide), WAIT_MS);
  });

  text.addEventListener('keydown', (event) => {
    if (event.key === 'ArrowDown' && !list.hidden) {
      event.preventDefault();
      list.querySelector('button')?.focus();
    } else if (event.key === 'Escape' && !list.hidden) hide();
  });

  list.addEventListener('keydown', (event) => {
    const buttons = [...list.querySelectorAll('button')];
    const i = buttons.indexOf(document.activeElement);
    if (event.key === 'ArrowDown' || event.key === 'ArrowRight') buttons[Math.min(i + 1, buttons.length - 1)]?.focus();
    else if (event.key === 'ArrowUp' || event.key === 'ArrowLeft') (i <= 0 ? text : buttons[i - 1]).focus();
    else if (event.key === 'Escape') {
      hide();
      text.focus();
    } else return;
    event.preventDefault();
  });

  // a new request or a cancelled one starts without stale suggestions
  document.getElementById('ai-ask')?.addEventListener('submit', hide);
});
