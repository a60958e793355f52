/**
 * Shared by the buyer pages: element building, same-origin JSON calls, money, field errors
 * placed next to their field (from the API's `issues[].path`), live status messages, a seller's
 * text with its web addresses as links, and the addresses that carry the order's token and the
 * theme's return address from page to page.
 */

type Child = Node | string | null | undefined | false;
type Props = Record<string, string | boolean | undefined>;

/** An element with attributes (`true` sets a bare attribute, false/undefined leaves it out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    element.setAttribute(name, value === true ? '' : value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

export interface ApiIssue {
  path: string;
  message: string;
}

export interface ApiAnswer<T> {
  ok: boolean;
  status: number;
  body: T;
  error?: { error: string; code?: string; issues?: ApiIssue[] };
}

/** A call to the service's own JSON API. A network failure answers status 0. */
export async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<ApiAnswer<T>> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      // FormData sets its own multipart content type.
      headers:
        body === undefined || body instanceof FormData
          ? { accept: 'application/json' }
          : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body),
    });
  } catch {
    return {
      ok: false,
      status: 0,
      body: undefined as T,
      error: { error: 'The connection failed. Check your network and try again.' },
    };
  }
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.ok) return { ok: true, status: response.status, body: parsed as T };
  const error = (
    parsed && typeof parsed === 'object' ? parsed : { error: `The request failed (${response.status}).` }
  ) as ApiAnswer<T>['error'];
  return { ok: false, status: response.status, body: undefined as T, error };
}

/** Multipart upload (proof of payment), same answer shape as api(). */
export async function upload<T = unknown>(path: string, form: FormData): Promise<ApiAnswer<T>> {
  return api<T>('POST', path, form);
}

export function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat(document.documentElement.lang || 'en', { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency}`;
  }
}

/** A web address in a seller's text; punctuation that ends a sentence is not part of it. */
const ADDRESS = /\bhttps?:\/\/[^\s<>"']+/gi;
const TRAILING = /[.,;:!?'")\]]+$/;

/**
 * A seller's plain text (delivery or payment instructions) as text nodes and links: each http(s)
 * address becomes a link (`rel="nofollow noopener"`, a new tab in a frame); nothing else does, so
 * no `javascript:` or markup in the text can become one. Built as nodes, never as HTML.
 */
export function linkified(text: string): Array<Node | string> {
  const parts: Array<Node | string> = [];
  let last = 0;
  for (const match of text.matchAll(ADDRESS)) {
    const address = match[0].replace(TRAILING, '');
    let url: URL;
    try {
      url = new URL(address);
    } catch {
      continue;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') continue;
    parts.push(text.slice(last, match.index));
    const framed = isEmbedded();
    parts.push(
      h(
        'a',
        { href: url.href, rel: 'nofollow noopener', target: framed ? '_blank' : undefined, class: 'text-link' },
        address,
      ),
    );
    last = match.index + address.length;
  }
  parts.push(text.slice(last));
  return parts.filter((part) => part !== '');
}

export function date(iso: string): string {
  return new Date(iso).toLocaleString(document.documentElement.lang || 'en', {
    dateStyle: 'medium',
    timeStyle: 'short',
  });
}

export function main(): HTMLElement {
  return document.getElementById('main')!;
}

/** The page's live status line (role=status): replaced text is announced. */
export function statusLine(): HTMLElement {
  let line = main().querySelector<HTMLElement>('.status');
  if (!line) {
    line = h('p', { class: 'status', role: 'status' });
    main().append(line);
  }
  return line;
}

/** The status line's text; `busy` shows the waiting spinner beside it. */
export function setStatus(text: string, busy = false): void {
  const line = statusLine();
  line.textContent = text;
  line.classList.toggle('waiting', busy);
}

/**
 * Replaces everything below the page heading and the live status line. The status line stays
 * the same element for the page's life: screen readers announce a live region's changes, not
 * a new one's arrival.
 */
export function replaceContent(...children: Child[]): void {
  const root = main();
  const heading = root.querySelector('h1');
  const status = statusLine();
  root.replaceChildren(...(heading ? [heading] : []), status);
  for (const child of children) if (child) root.append(child);
}

/** A message that stands for the whole page (no access, not found). */
export function showProblem(text: string, ...extra: Child[]): void {
  setStatus('');
  replaceContent(h('p', { class: 'problem', role: 'alert' }, text), ...extra);
}

let fieldCount = 0;

export interface Field {
  wrapper: HTMLElement;
  input: HTMLInputElement;
  error: HTMLElement;
}

/** A labelled input with its error slot wired by aria-describedby. */
export function field(label: string, attrs: Props & { name: string }, hint?: string): Field {
  const id = `f${++fieldCount}`;
  const errorId = `${id}-error`;
  const hintId = hint ? `${id}-hint` : undefined;
  const input = h('input', { id, ...attrs, 'aria-describedby': [hintId, errorId].filter(Boolean).join(' ') });
  const error = h('p', { id: errorId, class: 'field-error' });
  const checkbox = attrs.type === 'checkbox';
  const labelElement = h(
    'label',
    { for: id },
    label,
    attrs.required ? h('span', { class: 'required' }, ' (required)') : null,
  );
  const wrapper = checkbox
    ? h(
        'div',
        { class: 'field checkbox' },
        input,
        labelElement,
        hintId ? h('p', { id: hintId, class: 'hint' }, hint) : null,
        error,
      )
    : h(
        'div',
        { class: 'field' },
        labelElement,
        hintId ? h('p', { id: hintId, class: 'hint' }, hint) : null,
        input,
        error,
      );
  return { wrapper, input, error };
}

/**
 * Field errors for one form: `show(issues)` puts each message next to the field its path
 * names (aria-invalid set, message in the described-by slot), the rest in the form's alert,
 * and focuses the first field in error.
 */
export class FormErrors {
  private readonly fields = new Map<string, Field | { input: HTMLElement; error: HTMLElement }>();

  constructor(private readonly alert: HTMLElement) {}

  register(path: string, target: Field | { input: HTMLElement; error: HTMLElement }): void {
    this.fields.set(path, target);
  }

  clear(): void {
    this.alert.textContent = '';
    this.alert.hidden = true;
    for (const target of this.fields.values()) {
      target.input.removeAttribute('aria-invalid');
      target.error.textContent = '';
    }
  }

  /**
   * Shows the API's error; `codeToPath` places errors that carry a code but no path. `focus: false`
   * leaves the focus where it is (an answer to a change the buyer has moved on from).
   */
  show(answer: ApiAnswer<unknown>, codeToPath: Record<string, string> = {}, focus = true): void {
    this.clear();
    const issues = answer.error?.issues ?? [];
    const placed: Array<{ path: string; message: string }> = [];
    const loose: string[] = [];
    for (const issue of issues) {
      if (this.fields.has(issue.path)) placed.push(issue);
      else loose.push(issue.path ? `${issue.path}: ${issue.message}` : issue.message);
    }
    const codePath = answer.error?.code ? codeToPath[answer.error.code] : undefined;
    if (issues.length === 0 && codePath && this.fields.has(codePath))
      placed.push({ path: codePath, message: answer.error!.error });
    else if (issues.length === 0 || loose.length > 0)
      loose.unshift(issues.length === 0 ? (answer.error?.error ?? 'Something went wrong.') : 'Please check the form.');
    for (const issue of placed) {
      const target = this.fields.get(issue.path)!;
      target.input.setAttribute('aria-invalid', 'true');
      target.error.textContent = issue.message;
    }
    if (loose.length > 0 || placed.length === 0) {
      this.alert.textContent = loose.join(' ');
      this.alert.hidden = false;
    }
    const first = placed[0] ? this.fields.get(placed[0].path)!.input : null;
    if (!focus) return;
    if (first) first.focus();
    else this.alert.focus();
  }
}

/** A form-level alert, focusable so it can take the focus when nothing else does. */
export function formAlert(): HTMLElement {
  const alert = h('p', { class: 'form-error', role: 'alert', tabindex: '-1' });
  alert.hidden = true;
  return alert;
}

const tokenKey = (orderId: string) => `svc-checkout-token:${orderId}`;

/** The order's checkout token: from the address, else the one this tab saw before (kept for the Stripe return). */
export function checkoutToken(orderId: string): string | undefined {
  const given = new URLSearchParams(location.search).get('token') ?? undefined;
  try {
    if (given) sessionStorage.setItem(tokenKey(orderId), given);
    return given ?? sessionStorage.getItem(tokenKey(orderId)) ?? undefined;
  } catch {
    return given;
  }
}

export function isEmbedded(): boolean {
  return new URLSearchParams(location.search).get('embed') === '1';
}

const returnKey = (orderId: string) => `svc-return:${orderId}`;

/**
 * The theme's address the buyer came from (`return` in the checkout link), kept for the tab like
 * the token, so the pages after a payment provider's page still link back to it. The server checks
 * it against the store's origins before any page links it.
 */
export function returnAddress(orderId: string): string | undefined {
  const given = new URLSearchParams(location.search).get('return') ?? undefined;
  try {
    if (given) sessionStorage.setItem(returnKey(orderId), given);
    return given ?? sessionStorage.getItem(returnKey(orderId)) ?? undefined;
  } catch {
    return given;
  }
}

/** An address of this service's order pages, carrying the token, the embed flag and the theme's return address along. */
export function orderPagePath(kind: 'checkout' | 'orders', orderId: string, token: string | undefined): string {
  const query = new URLSearchParams();
  if (token) query.set('token', token);
  if (isEmbedded()) query.set('embed', '1');
  const back = returnAddress(orderId);
  if (back) query.set('return', back);
  const text = query.toString();
  return `/${kind}/${encodeURIComponent(orderId)}${text ? `?${text}` : ''}`;
}

// Framed by /embed.js: Escape inside the frame closes the overlay too (the theme's page
// never sees key presses made in the frame).
if (document.body.classList.contains('embed') && window.parent !== window) {
  // On key up: the frame is removed once the key is released, not between its down and up.
  document.addEventListener('keyup', (event) => {
    if (event.key === 'Escape') window.parent.postMessage({ type: 'svc:close' }, '*');
  });
}

/**
 * The proof-of-payment form of a manual payment (POST /api/orders/<id>/payment-proof with the
 * token, or the checkout cookie when there is none); `onSent` runs after the upload.
 */
export function proofForm(orderId: string, token: string | undefined, onSent: () => void): HTMLFormElement {
  const alert = formAlert();
  const errors = new FormErrors(alert);
  const proof = field(
    'Proof of payment',
    { name: 'file', type: 'file', accept: 'image/*,application/pdf', required: true },
    'A screenshot or PDF of the transfer, up to 10 MB.',
  );
  errors.register('file', proof);
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send proof');
  const form = h(
    'form',
    { novalidate: true, class: 'card', 'aria-labelledby': 'proof-heading' },
    h('h2', { id: 'proof-heading' }, 'Send your proof of payment'),
    alert,
    proof.wrapper,
    send,
  );
  const onSubmit = async (event: Event): Promise<void> => {
    event.preventDefault();
    const file = proof.input.files?.[0];
    if (!file) {
      errors.show({
        ok: false,
        status: 400,
        body: undefined,
        error: { error: 'Choose a file.', issues: [{ path: 'file', message: 'Choose a file.' }] },
      });
      return;
    }
    const data = new FormData();
    data.append('file', file, file.name);
    send.disabled = true;
    const answer = await upload(
      `/api/orders/${encodeURIComponent(orderId)}/payment-proof${token ? `?token=${encodeURIComponent(token)}` : ''}`,
      data,
    );
    send.disabled = false;
    if (!answer.ok) {
      errors.show(answer, { payload_too_large: 'file' });
      return;
    }
    onSent();
  };
  form.addEventListener('submit', (event) => void onSubmit(event));
  return form;
}
