/**
 * /embed.js: a buy button for themes on any site.
 *
 *   <script src="<the service origin>/embed.js" async></script>
 *   <button type="button" data-svc-store="<store id or subdomain>" data-svc-product="<product id>" data-svc-quantity="1">Buy</button>
 *
 * A click opens the service's embed checkout in an overlay (a modal dialog holding an
 * iframe of this script's origin); Escape, the close button or a click outside closes it and
 * gives the focus back to the button. Nothing is read from or written to the theme's page
 * beyond the overlay. `window.SvcEmbed.open({ store, product, quantity })` opens it from code.
 */
(function () {
  const script = document.currentScript as HTMLScriptElement | null;
  if (!script || !script.src) return;
  // Included twice by a theme: the first copy serves.
  const global = window as unknown as { SvcEmbed?: { open: (options: OpenOptions) => void; close: () => void } };
  if (global.SvcEmbed) return;
  const origin = new URL(script.src).origin;

  interface OpenOptions {
    store: string;
    product: string;
    quantity?: number;
  }

  let current: { overlay: HTMLElement; returnFocus: HTMLElement | null; onKey: (event: KeyboardEvent) => void } | null =
    null;

  function close(): void {
    if (!current) return;
    const { overlay, returnFocus, onKey } = current;
    current = null;
    document.removeEventListener('keydown', onKey, true);
    overlay.remove();
    if (returnFocus) returnFocus.focus();
  }

  function styleOf(element: HTMLElement, style: Partial<CSSStyleDeclaration>): void {
    Object.assign(element.style, style);
  }

  function open(options: OpenOptions, returnFocus: HTMLElement | null = null): void {
    close();
    const params = new URLSearchParams({
      store: options.store,
      product: options.product,
      quantity: String(options.quantity ?? 1),
    });
    const overlay = document.createElement('div');
    overlay.setAttribute('role', 'dialog');
    overlay.setAttribute('aria-modal', 'true');
    overlay.setAttribute('aria-label', 'Checkout');
    overlay.setAttribute('data-svc-overlay', '');
    styleOf(overlay, {
      position: 'fixed',
      inset: '0',
      zIndex: '2147483647',
      background: 'rgba(17, 24, 39, 0.72)',
      display: 'flex',
      alignItems: 'center',
      justifyContent: 'center',
      padding: '8px',
      boxSizing: 'border-box',
    });
    const panel = document.createElement('div');
    styleOf(panel, {
      position: 'relative',
      width: '100%',
      maxWidth: '520px',
      height: '100%',
      maxHeight: '820px',
      background: '#ffffff',
      borderRadius: '10px',
      overflow: 'hidden',
      boxShadow: '0 10px 40px rgba(0,0,0,0.35)',
      display: 'flex',
      flexDirection: 'column',
    });
    const bar = document.createElement('div');
    styleOf(bar, {
      display: 'flex',
      justifyContent: 'flex-end',
      padding: '4px',
      borderBottom: '1px solid #d1d5db',
      background: '#f9fafb',
    });
    const closeButton = document.createElement('button');
    closeButton.type = 'button';
    closeButton.textContent = 'Close';
    closeButton.setAttribute('aria-label', 'Close checkout');
    styleOf(closeButton, {
      font: '600 16px/1.2 system-ui, sans-serif',
      color: '#111827',
      background: '#ffffff',
      border: '1px solid #6b7280',
      borderRadius: '6px',
      padding: '10px 14px',
      minHeight: '44px',
      cursor: 'pointer',
    });
    closeButton.addEventListener('click', close);
    const frame = document.createElement('iframe');
    frame.src = `${origin}/embed/checkout?${params.toString()}`;
    frame.title = 'Checkout';
    frame.setAttribute('allow', 'clipboard-write');
    styleOf(frame, { border: '0', width: '100%', flex: '1 1 auto', background: '#ffffff' });
    bar.append(closeButton);
    panel.append(bar, frame);
    overlay.append(panel);
    overlay.addEventListener('click', (event) => {
      if (event.target === overlay) close();
    });
    const onKey = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        close();
      } else if (event.key === 'Tab' && current) {
        // Keep the focus inside the dialog: the close button and the frame.
        const inside = document.activeElement === closeButton || document.activeElement === frame;
        if (!inside) {
          event.preventDefault();
          closeButton.focus();
        }
      }
    };
    document.addEventListener('keydown', onKey, true);
    document.body.append(overlay);
    current = { overlay, returnFocus, onKey };
    frame.addEventListener('load', () => frame.focus(), { once: true });
    closeButton.focus();
  }

  function onClick(event: MouseEvent): void {
    const target = event.target instanceof Element ? event.target.closest<HTMLElement>('[data-svc-product]') : null;
    if (!target) return;
    const store = target.getAttribute('data-svc-store');
    const product = target.getAttribute('data-svc-product');
    if (!store || !product) return;
    event.preventDefault();
    const quantity = Number(target.getAttribute('data-svc-quantity') ?? '1');
    open({ store, product, quantity: Number.isInteger(quantity) && quantity > 0 ? quantity : 1 }, target);
  }

  document.addEventListener('click', onClick);
  // The framed pages ask to close on Escape; only a frame of our origin is listened to.
  window.addEventListener('message', (event) => {
    const data = event.data as { type?: unknown } | null;
    if (event.origin === origin && data && data.type === 'svc:close') close();
  });
  global.SvcEmbed = { open: (options) => open(options, null), close };
})();
