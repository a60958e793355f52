/**
 * The customer area (/account/<subdomain>): sign in with a 6-digit code sent by e-mail
 * (POST /api/customer/auth/start, then /verify, which sets svc_customer), then the buyer's
 * subscriptions in this store (cancel at the period end, resume, a new card, pay a past-due
 * renewal; each one's orders) and their orders, each opening its order page. `?mode=test` is the
 * test-mode area: the seller's test orders and subscriptions, its code in the development mailbox.
 */
import type { TBuyerOrder, TCustomer, TCustomerSubscription, TCustomerSubscriptionLink } from '@svc/schemas';
import {
  api,
  date,
  field,
  FormErrors,
  formAlert,
  h,
  main,
  money,
  replaceContent,
  setStatus,
  showProblem,
  type ApiAnswer,
} from './common.js';

const storeId = main().dataset.storeId!;
const testMode = main().dataset.mode === 'test';
const mode = testMode ? 'test' : undefined;

const STATUS_LABELS: Record<string, string> = {
  pending: 'Awaiting payment',
  paid: 'Paid',
  processing: 'Being delivered',
  completed: 'Delivered',
  refunded: 'Refunded',
  cancelled: 'Cancelled',
  expired: 'Expired',
};

async function load(): Promise<void> {
  const profile = await api<TCustomer>('GET', '/api/v1/customer-dashboard/profile');
  if (profile.ok && profile.body.storeId === storeId && profile.body.livemode === !testMode)
    return showOrders(profile.body.email);
  if (profile.ok || profile.status === 401) return signIn();
  showProblem(profile.error?.error ?? 'The page could not be loaded.');
}

function signIn(email = ''): void {
  const alert = formAlert();
  const errors = new FormErrors(alert);
  const emailField = field(
    'E-mail',
    { name: 'email', type: 'email', autocomplete: 'email', required: true, value: email || undefined },
    'The address you ordered with. We send a sign-in code there.',
  );
  errors.register('email', emailField);
  const send = h('button', { type: 'submit', class: 'primary' }, 'Send me a code');
  const form = h(
    'form',
    { novalidate: true, class: 'card', 'aria-labelledby': 'signin-heading' },
    h('h2', { id: 'signin-heading' }, 'Sign in'),
    alert,
    emailField.wrapper,
    send,
  );
  const onSubmit = async (event: Event): Promise<void> => {
    event.preventDefault();
    send.disabled = true;
    const address = emailField.input.value.trim();
    const answer = await api('POST', '/api/customer/auth/start', { storeId, email: address, mode });
    send.disabled = false;
    if (!answer.ok) return errors.show(answer);
    enterCode(address);
  };
  form.addEventListener('submit', (event) => void onSubmit(event));
  setStatus('');
  replaceContent(form);
}

function enterCode(email: string): void {
  const alert = formAlert();
  const errors = new FormErrors(alert);
  const code = field(
    'Code',
    {
      name: 'code',
      type: 'text',
      inputmode: 'numeric',
      autocomplete: 'one-time-code',
      pattern: '[0-9]{6}',
      maxlength: '6',
      required: true,
    },
    `The 6-digit code we sent to ${email}. It works for 10 minutes.`,
  );
  errors.register('code', code);
  const verify = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const again = h('button', { type: 'button', class: 'link' }, 'Use another address');
  again.addEventListener('click', () => signIn(email));
  const form = h(
    'form',
    { novalidate: true, class: 'card', 'aria-labelledby': 'code-heading' },
    h('h2', { id: 'code-heading' }, 'Enter your code'),
    alert,
    code.wrapper,
    verify,
    again,
  );
  const onSubmit = async (event: Event): Promise<void> => {
    event.preventDefault();
    verify.disabled = true;
    const answer = await api('POST', '/api/customer/auth/verify', {
      storeId,
      email,
      mode,
      code: code.input.value.trim(),
    });
    verify.disabled = false;
    if (!answer.ok) return errors.show(answer, { token_invalid: 'code', rate_limited: 'code' });
    await showOrders(email);
  };
  form.addEventListener('submit', (event) => void onSubmit(event));
  setStatus(`A code is on its way to ${email}.`);
  replaceContent(form);
  code.input.focus();
}

const SUBSCRIPTION_LABELS: Record<TCustomerSubscription['status'], string> = {
  incomplete: 'Incomplete',
  incomplete_expired: 'Expired',
  trialing: 'Free trial',
  active: 'Active',
  past_due: 'Past due',
  paused: 'Paused',
  canceled: 'Canceled',
};

/** A calendar day in the buyer's own words ("March 5, 2027"). */
function day(iso: string): string {
  return new Date(iso).toLocaleDateString(document.documentElement.lang || 'en', { dateStyle: 'long' });
}

/** "$9.00 / month", "$90.00 every 3 months", with the seats when more than one. */
function cadence(sub: TCustomerSubscription): string {
  const unit = sub.intervalCount === 1 ? ` / ${sub.interval}` : ` every ${sub.intervalCount} ${sub.interval}s`;
  const seats = sub.quantity > 1 ? ` · ${sub.quantity} seats` : '';
  return `${money(sub.amount, sub.currency)}${unit}${seats}`;
}

/** What happens next, in one line: the next charge, the end, a scheduled pause, or the payment that failed. */
function nextLine(sub: TCustomerSubscription): string {
  if (sub.status === 'canceled') return sub.endedAt ? `Ended on ${day(sub.endedAt)}` : 'Ended';
  if (sub.endsAt) return `Ends on ${day(sub.endsAt)}`;
  // The seller's pause, from the period end; it resumes (and charges) on nextChargeAt when it has an end.
  if (sub.pausesAt)
    return `Pauses on ${day(sub.pausesAt)}${sub.nextChargeAt ? `; next charge ${money(sub.amount, sub.currency)} on ${day(sub.nextChargeAt)}` : ''}`;
  if (sub.status === 'past_due')
    return `The last payment failed${sub.nextChargeAt ? `; we try again on ${day(sub.nextChargeAt)}` : ''}. Pay now to keep it.`;
  if (sub.status === 'paused') return sub.nextChargeAt ? `Paused until ${day(sub.nextChargeAt)}` : 'Paused';
  if (sub.nextChargeAt) return `Next charge ${money(sub.amount, sub.currency)} on ${day(sub.nextChargeAt)}`;
  return '';
}

const ORDER_REASONS: Record<string, string> = {
  subscription_create: 'First payment',
  subscription_cycle: 'Renewal',
  subscription_update: 'Plan change',
  purchase: 'Purchase',
};

/** Messages the account page shows after coming back from a gateway's page (`?done=`). */
const DONE_MESSAGES: Record<string, string> = {
  'payment-method': 'Your new payment method is saved: it pays the next renewals.',
};

/** Where the buyer was sent to come back with `done`: shown once, then taken out of the address. */
function takeDoneMessage(): string | undefined {
  const params = new URLSearchParams(location.search);
  const done = params.get('done');
  if (!done) return undefined;
  params.delete('done');
  const rest = params.toString();
  history.replaceState(null, '', `${location.pathname}${rest ? `?${rest}` : ''}`);
  return DONE_MESSAGES[done];
}

/** The confirmation of a cancel: a modal dialog (focus moves in, Escape closes it, focus returns). */
function confirmCancel(sub: TCustomerSubscription, opener: HTMLElement, onDone: (message: string) => void): void {
  const alert = formAlert();
  const errors = new FormErrors(alert);
  const reasonId = `reason-${sub.id}`;
  const reason = h('textarea', { id: reasonId, name: 'comment', rows: '3', maxlength: '500' });
  const reasonError = h('p', { id: `${reasonId}-error`, class: 'field-error' });
  reason.setAttribute('aria-describedby', `${reasonId}-hint ${reasonId}-error`);
  errors.register('comment', { input: reason, error: reasonError });
  const running = sub.status === 'active' || sub.status === 'trialing';
  const confirm = h('button', { type: 'submit', class: 'danger' }, 'Cancel subscription');
  const keep = h('button', { type: 'button', class: 'secondary' }, 'Keep subscription');
  const dialog = h(
    'dialog',
    { class: 'confirm', 'aria-labelledby': `cancel-${sub.id}-title`, 'aria-describedby': `cancel-${sub.id}-text` },
    h(
      'form',
      { novalidate: true },
      h('h2', { id: `cancel-${sub.id}-title` }, `Cancel ${sub.productName}?`),
      h(
        'p',
        { id: `cancel-${sub.id}-text` },
        running
          ? `It stays ${sub.status === 'trialing' ? 'in its trial' : 'active'} until ${day(sub.currentPeriodEnd)}, then ends. You are not charged again.`
          : 'No paid period is running, so it ends now. You are not charged again.',
      ),
      alert,
      h(
        'div',
        { class: 'field' },
        h('label', { for: reasonId }, 'Why are you cancelling? ', h('span', { class: 'hint' }, '(optional)')),
        h('p', { id: `${reasonId}-hint`, class: 'hint' }, 'The store sees what you write here.'),
        reason,
        reasonError,
      ),
      h('div', { class: 'actions' }, confirm, keep),
    ),
  );
  const close = (): void => {
    dialog.close();
    dialog.remove();
    opener.focus();
  };
  keep.addEventListener('click', close);
  dialog.addEventListener('cancel', (event) => {
    event.preventDefault();
    close();
  });
  dialog.querySelector('form')!.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      confirm.disabled = true;
      const comment = reason.value.trim();
      const answer = await api<TCustomerSubscription>(
        'POST',
        `/api/customer/subscriptions/${encodeURIComponent(sub.id)}/cancel`,
        comment ? { comment } : {},
      );
      confirm.disabled = false;
      if (!answer.ok) return errors.show(answer);
      dialog.close();
      dialog.remove();
      onDone(
        answer.body.endsAt
          ? `${sub.productName} is canceled: it ends on ${day(answer.body.endsAt)}.`
          : `${sub.productName} has ended.`,
      );
    })();
  });
  document.body.append(dialog);
  dialog.showModal();
  reason.focus();
}

function subscriptionCard(
  sub: TCustomerSubscription,
  refresh: (message: string, focusId?: string) => void,
): HTMLElement {
  const headingId = `sub-${sub.id}`;
  const alert = formAlert();
  const act = async (
    button: HTMLButtonElement,
    path: string,
    then: (answer: ApiAnswer<TCustomerSubscription & TCustomerSubscriptionLink>) => void,
  ): Promise<void> => {
    button.disabled = true;
    alert.hidden = true;
    const answer = await api<TCustomerSubscription & TCustomerSubscriptionLink>(
      'POST',
      `/api/customer/subscriptions/${encodeURIComponent(sub.id)}/${path}`,
      {},
    );
    button.disabled = false;
    if (!answer.ok) {
      alert.textContent = answer.error?.error ?? 'Something went wrong.';
      alert.hidden = false;
      alert.focus();
      return;
    }
    then(answer);
  };
  const buttons: HTMLButtonElement[] = [];
  const button = (label: string, kind: string, onClick: (self: HTMLButtonElement) => void): void => {
    const element = h('button', { type: 'button', class: kind }, label);
    element.addEventListener('click', () => onClick(element));
    buttons.push(element);
  };
  const going =
    sub.status === 'active' || sub.status === 'trialing' || sub.status === 'past_due' || sub.status === 'paused';
  const goTo = (answer: ApiAnswer<TCustomerSubscriptionLink>): void => location.assign(answer.body.url);
  if (sub.status === 'past_due') button('Pay now', 'primary', (self) => void act(self, 'pay', goTo));
  if (sub.cancelAtPeriodEnd)
    button(
      'Resume subscription',
      'secondary',
      (self) =>
        void act(self, 'resume', () => refresh(`${sub.productName} is active again: it renews as before.`, headingId)),
    );
  if (going && sub.paymentMethod !== 'manual')
    button('Update payment method', 'secondary', (self) => void act(self, 'payment-method', goTo));
  if (going && !sub.cancelAtPeriodEnd)
    button('Cancel subscription', 'secondary', (self) =>
      confirmCancel(sub, self, (message) => refresh(message, headingId)),
    );
  const next = nextLine(sub);
  const paidOrders = sub.orders;
  return h(
    'li',
    { class: 'card subscription', 'aria-labelledby': headingId },
    h(
      'div',
      { class: 'subscription-head' },
      h('h3', { id: headingId, tabindex: '-1' }, sub.productName),
      h(
        'span',
        { class: `badge status-${sub.cancelAtPeriodEnd ? 'canceling' : sub.status}` },
        sub.cancelAtPeriodEnd ? 'Canceling' : SUBSCRIPTION_LABELS[sub.status],
      ),
    ),
    h(
      'dl',
      { class: 'subscription-facts' },
      h('div', {}, h('dt', {}, 'Plan'), h('dd', {}, cadence(sub))),
      sub.status === 'trialing' && sub.trialEnd
        ? h('div', {}, h('dt', {}, 'Free trial ends'), h('dd', {}, day(sub.trialEnd)))
        : null,
    ),
    next ? h('p', { class: `next-charge${sub.status === 'past_due' ? ' problem-text' : ''}` }, next) : null,
    alert,
    buttons.length ? h('div', { class: 'actions' }, ...buttons) : null,
    paidOrders.length
      ? h(
          'details',
          { class: 'subscription-orders' },
          h('summary', {}, `Receipts and orders (${paidOrders.length})`),
          h(
            'ul',
            { class: 'orders' },
            ...paidOrders.map((order) =>
              h(
                'li',
                { class: 'order' },
                h(
                  'a',
                  { href: `/orders/${encodeURIComponent(order.id)}`, class: 'order-link' },
                  `${order.orderId}: ${ORDER_REASONS[order.billingReason] ?? order.billingReason}`,
                ),
                h('span', { class: `badge status-${order.status}` }, STATUS_LABELS[order.status] ?? order.status),
                h('span', { class: 'hint' }, `${date(order.createdAt)} · ${money(order.price, order.currency)}`),
              ),
            ),
          ),
        )
      : null,
  );
}

async function showOrders(email: string, message?: string, focusId?: string): Promise<void> {
  const [answer, subs] = await Promise.all([
    api<{ orders: TBuyerOrder[] }>('GET', '/api/customer/orders?limit=100'),
    api<{ subscriptions: TCustomerSubscription[] }>('GET', '/api/customer/subscriptions'),
  ]);
  if (answer.status === 401 || subs.status === 401) return signIn(email);
  if (!answer.ok) return showProblem(answer.error?.error ?? 'Your orders could not be loaded.');
  if (!subs.ok) return showProblem(subs.error?.error ?? 'Your subscriptions could not be loaded.');
  const signOut = h('button', { type: 'button', class: 'secondary' }, 'Sign out');
  const onSignOut = async (): Promise<void> => {
    await api('POST', '/api/customer/auth/logout');
    signIn(email);
  };
  signOut.addEventListener('click', () => void onSignOut());
  const orders = answer.body.orders;
  const subscriptions = subs.body.subscriptions;
  const refresh = (text: string, id?: string): void => void showOrders(email, text, id);
  const counted = orders.length === 1 ? '1 order.' : `${orders.length} orders.`;
  setStatus(message ?? takeDoneMessage() ?? counted);
  replaceContent(
    testMode
      ? h('p', { class: 'notice test-mode' }, 'Test mode: your test orders and subscriptions. No money moves.')
      : null,
    h('div', { class: 'account-bar' }, h('p', { class: 'signed-in' }, `Signed in as ${email}.`), signOut),
    subscriptions.length
      ? h(
          'section',
          { 'aria-labelledby': 'subscriptions-heading' },
          h('h2', { id: 'subscriptions-heading' }, 'Subscriptions'),
          h('ul', { class: 'subscriptions' }, ...subscriptions.map((sub) => subscriptionCard(sub, refresh))),
        )
      : null,
    h(
      'section',
      { 'aria-labelledby': 'orders-heading' },
      h('h2', { id: 'orders-heading' }, 'Your orders'),
      orders.length === 0
        ? h('p', {}, 'No orders with this address in this store yet.')
        : h(
            'ul',
            { class: 'orders' },
            ...orders.map((order) =>
              h(
                'li',
                { class: 'card order' },
                h(
                  'a',
                  { href: `/orders/${encodeURIComponent(order.id)}`, class: 'order-link' },
                  `${order.orderId}: ${order.productName}`,
                ),
                h('span', { class: `badge status-${order.status}` }, STATUS_LABELS[order.status] ?? order.status),
                h('span', { class: 'hint' }, `${date(order.createdAt)} · ${money(order.price, order.currency)}`),
              ),
            ),
          ),
    ),
  );
  const focus = (focusId && document.getElementById(focusId)) || null;
  if (focus) return focus.focus();
  const heading = main().querySelector<HTMLElement>(
    subscriptions.length ? '#subscriptions-heading' : '#orders-heading',
  );
  heading?.setAttribute('tabindex', '-1');
  heading?.focus();
}

void load();
