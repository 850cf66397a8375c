// Short notices ("toasts") for the console and the admin page, and the one DOM helper both use.
// A notice is for news that needs no answer: at most three show at once (a fourth pushes out the
// oldest), the same message is never shown twice (it just stays a little longer), and each one
// goes by itself within six seconds or at once with its × button. An error that needs the user to
// act is written beside the form it belongs to instead, where it stays until the next attempt.

const MAX_NOTICES = 3;
const INFO_MS = 4000;
const ERROR_MS = 6000;

/** A new element with an optional class and text (never HTML). */
export function el(name, { class: className, text } = {}) {
  const node = document.createElement(name);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const timers = new WeakMap();

function dismiss(node) {
  clearTimeout(timers.get(node));
  node.remove();
}

function schedule(node, ms) {
  clearTimeout(timers.get(node));
  timers.set(
    node,
    setTimeout(() => dismiss(node), ms),
  );
}

export function toast(message, { error = false } = {}) {
  const box = document.getElementById('toasts');
  const lifetime = error ? ERROR_MS : INFO_MS;
  const same = [...box.children].find((node) => node.dataset.message === message);
  if (same) {
    box.append(same); // newest last, as a new one would be
    schedule(same, lifetime);
    return;
  }
  while (box.children.length >= MAX_NOTICES) dismiss(box.firstElementChild);
  const node = el('div', { class: `toast${error ? ' toast-error' : ''}` });
  node.dataset.message = message;
  if (error) node.setAttribute('role', 'alert');
  const close = el('button', { class: 'toast-close', text: '×' });
  close.type = 'button';
  close.setAttribute('aria-label', 'Dismiss');
  close.addEventListener('click', () => dismiss(node));
  node.append(el('span', { text: message }), close);
  box.append(node);
  schedule(node, lifetime);
}
