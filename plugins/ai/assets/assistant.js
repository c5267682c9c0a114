// The AI assistant's page: the request goes to POST /api/ai/assistant/parse;
// the proposal fills a form the user can edit, then confirm (POST
// /api/ai/assistant/confirm) or cancel. Outcomes are told in #ai-result (a
// status region), refusals in #ai-error (an alert). Its words come from the
// page (#ai-assistant-texts, in the user's language); the English here is kept
// for a page without them.
document.addEventListener('DOMContentLoaded', () => {
  const $ = (id) => document.getElementById(id);
  const ask = $('ai-ask');
  if (!ask) return;
  const ENGLISH = {
    nobody: 'Nobody',
    noProject: 'None: my personal task',
    zone: 'In {zone}; a task keeps a due date only, so the time goes into its description.',
    sourceProvider: "Proposed by the tenant's AI provider.",
    sourceParser: 'Proposed by the built-in parser.',
    due: ', due {date}',
    dueAt: ', due {date} at {time}',
    assignedTo: ', assigned to {name}',
    severalMatched: 'Several people or projects matched: choose one.',
    proposed: 'Proposed: "{title}"{due}, priority {priority}{who}. Review it below, then create it or cancel.{more}',
    writeFirst: 'Write a request first.',
    reading: 'Reading your request…',
    notRead: 'The request could not be read',
    needsTitle: 'The task needs a title.',
    timeNeedsDate: 'A due time needs a due date.',
    notCreated: 'The task was not created',
    created: 'Created the task {task}.',
    createdTimeKept: 'Created the task {task}; its due time is in its description.',
    cancelled: 'Cancelled: nothing was created.',
    requestField: 'request',
    serverAnswered: 'the server answered {status}',
    unreachable: 'the server could not be reached',
    kinds: {},
  };
  const T = { ...ENGLISH, ...(plinth.data('ai-assistant-texts') ?? {}) };
  const text = $('ai-text');
  const proposalBox = $('ai-proposal');
  const confirmForm = $('ai-confirm');
  const errorBox = $('ai-error');
  const result = $('ai-result');
  let current = null;

  const el = (tag, content, attrs = {}) => {
    const node = document.createElement(tag);
    if (content !== undefined && content !== null) node.textContent = content;
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    return node;
  };
  const say = (...nodes) => result.replaceChildren(...nodes.map((n) => (typeof n === 'string' ? document.createTextNode(n) : n)));
  const clearError = () => {
    errorBox.replaceChildren();
    errorBox.classList.remove('alert');
    for (const f of document.querySelectorAll('[aria-invalid]')) f.removeAttribute('aria-invalid');
  };
  /** the API's problem: its title and detail, and each field error (marked on its input) */
  const refuse = (message, input) => {
    errorBox.classList.add('alert');
    errorBox.replaceChildren(el('strong', message));
    input.setAttribute('aria-invalid', 'true');
    input.focus();
  };
  const showError = (res, what) => {
    const body = res.body && typeof res.body === 'object' ? res.body : {};
    const list = el('ul');
    for (const e of body.errors ?? []) {
      list.append(el('li', `${e.path.replace(/^\//, '') || T.requestField}: ${e.message}`));
      const input = confirmForm.querySelector(`[name="${e.path.replace(/^\//, '').split('/')[0]}"]`);
      if (input) input.setAttribute('aria-invalid', 'true');
    }
    errorBox.classList.add('alert');
    // the field errors say what the detail sums up
    const more = list.children.length ? [list] : body.detail ? [el('p', body.detail)] : [];
    errorBox.replaceChildren(el('strong', `${what}: ${body.title ?? plinth.fillIn(T.serverAnswered, { status: res.status })}`), ...more);
  };
  const busy = (button, on) => {
    button.disabled = on;
    button.setAttribute('aria-busy', on ? 'true' : 'false');
  };

  /** the request with what was recognised marked */
  const recognised = (p) => {
    const out = [];
    let at = 0;
    for (const s of p.spans) {
      if (s.start < at) continue;
      out.push(document.createTextNode(p.text.slice(at, s.start)));
      const kind = T.kinds[s.kind] ?? s.kind;
      out.push(el('mark', p.text.slice(s.start, s.end), { title: kind }));
      out.push(el('span', ` (${kind})`, { class: 'visually-hidden' }));
      at = s.end;
    }
    out.push(document.createTextNode(p.text.slice(at)));
    return out;
  };
  const options = (select, none, chosen, people) => {
    const seen = new Set();
    select.replaceChildren(el('option', none, { value: '' }));
    for (const x of people) {
      if (!x || seen.has(x.id)) continue;
      seen.add(x.id);
      const label = x.email ? `${x.name} (${x.email})` : x.key ? `${x.name} (${x.key})` : (x.name ?? x.id);
      select.append(el('option', label, { value: x.id }));
    }
    if (chosen && !seen.has(chosen)) select.append(el('option', chosen, { value: chosen }));
    select.value = chosen ?? '';
  };
  const spanValue = (p, kind) => p.spans.find((s) => s.kind === kind && s.value && typeof s.value === 'object')?.value ?? null;

  const showProposal = (p) => {
    current = p;
    const f = confirmForm.elements;
    f.title.value = p.proposal.title;
    f.dueDate.value = p.proposal.dueDate ?? '';
    f.dueTime.value = p.proposal.dueTime ?? '';
    f.priority.value = p.proposal.priority;
    f.description.value = '';
    options(f.assigneeId, T.nobody, p.proposal.assigneeId, [spanValue(p, 'assignee'), ...p.alternatives.assignee]);
    options(f.projectId, T.noProject, p.proposal.projectId, [spanValue(p, 'project'), ...p.alternatives.project]);
    $('ai-zone').textContent = plinth.fillIn(T.zone, { zone: p.timeZone });
    $('ai-source').textContent = p.source === 'provider' ? T.sourceProvider : T.sourceParser;
    $('ai-recognised').replaceChildren(...recognised(p));
    const warnings = $('ai-warnings');
    warnings.replaceChildren(...p.warnings.map((w) => el('li', w.message)));
    warnings.hidden = p.warnings.length === 0;
    proposalBox.hidden = false;
    const due = p.proposal.dueDate ? plinth.fillIn(p.proposal.dueTime ? T.dueAt : T.due, { date: p.proposal.dueDate, time: p.proposal.dueTime }) : '';
    const who = f.assigneeId.selectedOptions[0]?.value ? plinth.fillIn(T.assignedTo, { name: f.assigneeId.selectedOptions[0].textContent }) : '';
    const more = p.alternatives.assignee.length || p.alternatives.project.length ? ` ${T.severalMatched}` : '';
    // the priority as the form's select names it, in the user's language
    const priority = f.priority.selectedOptions[0]?.textContent ?? p.proposal.priority;
    say(plinth.fillIn(T.proposed, { title: p.proposal.title, due, priority, who, more }));
  };
  const closeProposal = () => {
    current = null;
    proposalBox.hidden = true;
  };

  ask.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError();
    const value = text.value.trim();
    if (!value) return refuse(T.writeFirst, text);
    const button = $('ai-ask-button');
    busy(button, true);
    say(T.reading);
    try {
      const res = await plinth.api('POST', '/ai/assistant/parse', { text: value });
      if (res.ok) showProposal(res.body);
      else {
        closeProposal();
        say('');
        showError(res, T.notRead);
      }
    } catch {
      say('');
      showError({ status: 0, body: { title: T.unreachable } }, T.notRead);
    } finally {
      busy(button, false);
    }
  });

  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      ask.requestSubmit();
    }
  });

  confirmForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!current) return;
    clearError();
    const f = confirmForm.elements;
    if (!f.title.value.trim()) return refuse(T.needsTitle, f.title);
    if (f.dueTime.value && !f.dueDate.value) return refuse(T.timeNeedsDate, f.dueDate);
    const body = {
      title: f.title.value.trim(),
      dueDate: f.dueDate.value || null,
      dueTime: f.dueTime.value || null,
      timeZone: current.timeZone,
      priority: f.priority.value,
      assigneeId: f.assigneeId.value || null,
      projectId: f.projectId.value || null,
      ...(f.description.value.trim() ? { description: f.description.value } : {}),
    };
    const button = $('ai-confirm-button');
    busy(button, true);
    try {
      const res = await plinth.api('POST', '/ai/assistant/confirm', body);
      if (!res.ok) return showError(res, T.notCreated);
      const task = res.body.task;
      closeProposal();
      text.value = '';
      // the text around {task}, with the task's link in its place
      const [before, after = ''] = (res.body.dueTimeKept ? T.createdTimeKept : T.created).split('{task}');
      say(before, el('a', task.title, { href: `/ai/tasks/${encodeURIComponent(task.id)}` }), after);
      text.focus();
    } catch {
      showError({ status: 0, body: { title: T.unreachable } }, T.notCreated);
    } finally {
      busy(button, false);
    }
  });

  $('ai-cancel').addEventListener('click', () => {
    clearError();
    closeProposal();
    say(T.cancelled);
    text.focus();
  });

  for (const button of document.querySelectorAll('[data-example]')) {
    button.addEventListener('click', () => {
      text.value = button.dataset.example;
      text.focus();
    });
  }
});
