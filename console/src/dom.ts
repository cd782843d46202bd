/** A small element builder: h('button', {class: 'x', onclick}, 'Run'). */
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;
export type Child = Node | string | number | null | undefined | false;

export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] => {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = String(value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
};

export const append = (el: Element, children: (Child | Child[])[]) => {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
};

/** Replaces an element's children. */
export const fill = (el: Element, ...children: (Child | Child[])[]) => {
  el.replaceChildren();
  append(el, children);
};

/** Writes text to the clipboard, falling back to a hidden textarea where the API is refused. */
export const copyText = async (text: string) => {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    const area = h('textarea', { style: 'position:fixed;left:-9999px' });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
};

/** Toasts shown at once; an older one gives way to a newer. */
const MAX_TOASTS = 4;

/**
 * A short message in the stack at the top right, under the header. The stack takes its own room in
 * the page (the view below gives way) rather than lying over it, so a toast never covers a control;
 * what is anchored at the bottom (the chat's input and Send) does not move. Each has a close
 * button; information fades after a few seconds, an error after fifteen (or when newer ones push
 * it out).
 */
export const toast = (message: string, kind: 'info' | 'error' = 'info') => {
  let stack = document.querySelector<HTMLElement>('.toasts');
  if (!stack) {
    stack = h('div', { class: 'toasts', 'data-testid': 'toasts', 'aria-live': 'polite' });
    const header = document.querySelector('#app > header');
    if (header) header.after(stack);
    else document.body.prepend(stack);
  }
  const el = h(
    'div',
    { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status', 'data-testid': 'toast' },
    h('span', { class: 'toast-text' }, message),
  );
  const close = h(
    'button',
    {
      class: 'toast-close',
      title: 'Dismiss',
      'aria-label': 'Dismiss',
      'data-testid': 'toast-close',
      onclick: () => el.remove(),
    },
    '×',
  );
  el.append(close);
  stack.append(el);
  while (stack.children.length > MAX_TOASTS) stack.firstElementChild?.remove();
  setTimeout(() => el.remove(), kind === 'info' ? 3500 : 15_000);
};

export const formatBytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 ** 2).toFixed(1)} MB`;

export const cellText = (v: unknown) =>
  v === null || v === undefined ? 'NULL' : typeof v === 'object' ? JSON.stringify(v) : String(v);
