/**
 * The customer area (/account/<subdomain>): sign in with a 6-digit code sent by e-mail
 * (POST /api/customer/auth/start, then /verify, which sets svc_customer), then the buyer's
 * orders in this store, each opening its order page.
 */
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
} from './common.js';

interface BuyerOrder {
  id: string;
  orderId: string;
  status: string;
  productName: string;
  price: number;
  currency: string;
  createdAt: string;
}

const storeId = main().dataset.storeId!;

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
  const profile = await api<{ storeId: string; email: string }>('GET', '/api/v1/customer-dashboard/profile');
  if (profile.ok && profile.body.storeId === storeId) return showOrders(profile.body.email);
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
    const answer = await api('POST', '/api/customer/auth/start', { storeId, email: address });
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
    const answer = await api('POST', '/api/customer/auth/verify', { storeId, email, code: code.input.value.trim() });
    verify.disabled = false;
    if (!answer.ok) return errors.show(answer, { token_invalid: 'code', rate_limited: 'code' });
    await showOrders(email);
  };
  form.addEventListener('submit', (event) => void onSubmit(event));
  setStatus(`A code is on its way to ${email}.`);
  replaceContent(form);
  code.input.focus();
}

async function showOrders(email: string): Promise<void> {
  const answer = await api<{ orders: BuyerOrder[] }>('GET', '/api/customer/orders?limit=100');
  if (answer.status === 401) return signIn(email);
  if (!answer.ok) return showProblem(answer.error?.error ?? 'Your orders could not be loaded.');
  const signOut = h('button', { type: 'button', class: 'secondary' }, 'Sign out');
  const onSignOut = async (): Promise<void> => {
    await api('POST', '/api/customer/auth/logout');
    signIn(email);
  };
  signOut.addEventListener('click', () => void onSignOut());
  const orders = answer.body.orders;
  setStatus(orders.length === 1 ? '1 order.' : `${orders.length} orders.`);
  replaceContent(
    h('div', { class: 'account-bar' }, h('p', { class: 'signed-in' }, `Signed in as ${email}.`), signOut),
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
  main().querySelector<HTMLElement>('#orders-heading')?.setAttribute('tabindex', '-1');
  main().querySelector<HTMLElement>('#orders-heading')?.focus();
}

void load();
