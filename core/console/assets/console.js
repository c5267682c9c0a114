// Progressive enhancement only: every page works without this file.
// htmx 4 swaps 4xx answers too; the console's error pages are whole pages, so
// a failed partial request reloads the page to show them in full.
document.addEventListener('DOMContentLoaded', () => {
  // the switchers submit on change; their buttons stay for keyboards without a change event
  for (const form of document.querySelectorAll('form[data-autosubmit]')) {
    const select = form.querySelector('select');
    const button = form.querySelector('button');
    if (button) button.classList.add('visually-hidden');
    if (select) select.addEventListener('change', () => form.requestSubmit());
  }
});
