// What the BI forms share when the API refuses a save (analytics-add.js,
// analytics-save.js, data.js): field errors beside their inputs (the element
// `<input id>-error`, aria-invalid), the other errors for the form's alert,
// and both cleared before the next try. `inputs`: the inputs by the JSON
// pointer the API's error paths start with.
window.biFormProblems = (alertBox, inputs) => {
  const errorOf = (input) => document.getElementById(`${input.id}-error`);
  const fieldError = (input, message) => {
    input.setAttribute('aria-invalid', 'true');
    errorOf(input).textContent = message;
  };
  return {
    fieldError,
    clear() {
      alertBox.replaceChildren();
      for (const input of Object.values(inputs)) {
        input.removeAttribute('aria-invalid');
        errorOf(input).textContent = '';
      }
    },
    /** Shows each error about an input beside it: the first such input (to focus), and the errors left for the alert. */
    place(errors) {
      let first = null;
      const others = [];
      for (const e of errors ?? []) {
        const path = Object.keys(inputs).find((p) => e.path === p || e.path.startsWith(`${p}/`));
        if (path) {
          fieldError(inputs[path], e.message);
          first ??= inputs[path];
        } else others.push(e);
      }
      return { first, others };
    },
  };
};
