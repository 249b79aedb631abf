import { errorBox, h } from './dom.js';

let seq = 0;

/**
 * Asks for confirmation in a modal `<dialog>`, then runs the action. The dialog lives outside the view, so a live
 * refresh of the page underneath never closes it or clears what was typed. A failed action keeps the dialog open with
 * the server's error; resolves with the action's result, or undefined when cancelled.
 *
 * @param {object} o
 * @param {string} o.title        heading, e.g. "Replay dead letter 12"
 * @param {string} o.description  what will happen
 * @param {string} o.confirmLabel the confirming button's name, e.g. "Replay"
 * @param {'required'|'optional'|'none'} [o.reason]
 * @param {string} [o.body]       when given, an editable message body is part of the form
 * @param {(input: {reason?: string, body?: string}) => Promise<unknown>} o.run
 */
export function confirmAction({ title, description, confirmLabel, reason = 'none', body, run }) {
  const id = `dialog-${(seq += 1)}`;
  const reasonInput =
    reason === 'none'
      ? null
      : h('textarea', {
          id: `${id}-reason`,
          name: 'reason',
          rows: 3,
          maxlength: 500,
          required: reason === 'required',
        });
  const bodyInput =
    body === undefined ? null : h('textarea', { id: `${id}-body`, name: 'body', rows: 10, class: 'code-input' });
  if (bodyInput) bodyInput.value = body;
  const problem = h('div', { class: 'dialog-problem' });
  const confirm = h('button', { type: 'submit', class: 'primary' }, confirmLabel);
  const cancel = h('button', { type: 'button' }, 'Cancel');
  const form = h(
    'form',
    { method: 'dialog', novalidate: true },
    h('h2', { id: `${id}-title` }, title),
    h('p', { id: `${id}-desc` }, description),
    bodyInput ? [h('label', { for: bodyInput.id }, 'Message body (JSON)'), bodyInput] : null,
    reasonInput
      ? [
          h('label', { for: reasonInput.id }, reason === 'required' ? 'Reason (required)' : 'Reason (optional)'),
          reasonInput,
        ]
      : null,
    problem,
    h('div', { class: 'dialog-buttons' }, cancel, confirm),
  );
  const dialog = h('dialog', { 'aria-labelledby': `${id}-title`, 'aria-describedby': `${id}-desc` }, form);
  document.body.append(dialog);

  return new Promise((resolve) => {
    let result;
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(result);
    });
    cancel.addEventListener('click', () => dialog.close());
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      problem.replaceChildren();
      const input = {};
      if (reasonInput) {
        const text = reasonInput.value.trim();
        if (reason === 'required' && !text) {
          problem.append(h('p', { role: 'alert', class: 'error' }, 'Give a reason: it goes into the audit log.'));
          reasonInput.focus();
          return;
        }
        if (text) input.reason = text;
      }
      if (bodyInput) input.body = bodyInput.value;
      confirm.disabled = true;
      try {
        result = await run(input);
        dialog.close();
      } catch (error) {
        problem.append(errorBox(error, `${confirmLabel} failed`));
      } finally {
        confirm.disabled = false;
      }
    });
    dialog.showModal();
    (reasonInput ?? bodyInput ?? confirm).focus();
  });
}
