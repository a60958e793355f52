/**
 * Status badges: the status in words (capitalised, readable without the colour), with a tone the
 * colour repeats. One table per kind of object, so a status reads the same on every screen.
 */
type Tone = 'success' | 'info' | 'warning' | 'danger' | 'neutral';

const TONES: Record<Tone, string> = {
  success: 'bg-success-soft text-success border-success',
  info: 'bg-info-soft text-info border-info',
  warning: 'bg-warning-soft text-warning border-warning',
  danger: 'bg-danger-soft text-danger border-danger',
  neutral: 'bg-surface text-muted border-line-strong',
};

const STATUS_TONES: Record<string, Record<string, Tone>> = {
  order: {
    pending: 'warning',
    paid: 'info',
    processing: 'info',
    completed: 'success',
    refunded: 'neutral',
    cancelled: 'neutral',
    expired: 'neutral',
  },
  subscription: {
    incomplete: 'warning',
    incomplete_expired: 'neutral',
    trialing: 'info',
    active: 'success',
    past_due: 'danger',
    paused: 'neutral',
    canceled: 'neutral',
  },
  license: { active: 'success', inactive: 'warning', expired: 'neutral', disabled: 'danger' },
  key: { available: 'success', assigned: 'info', revoked: 'neutral', active: 'success', disabled: 'danger' },
  delivery: { pending: 'warning', queued: 'info', success: 'success', failed: 'danger', skipped: 'neutral' },
  ticket: { open: 'warning', answered: 'info', closed: 'neutral' },
  product: { active: 'success', draft: 'neutral', archived: 'neutral' },
  coupon: { active: 'success', inactive: 'neutral', expired: 'neutral', 'used up': 'neutral' },
  webhook: { enabled: 'success', disabled: 'neutral' },
  step: { done: 'success', 'to do': 'neutral' },
  tax: { 'reverse charge': 'info' },
};

export type StatusKind = keyof typeof STATUS_TONES;

/** `pending` → `Pending`, `used up` → `Used up`, `past_due` → `Past due`. */
export function statusLabel(status: string): string {
  const words = status.replace(/_/g, ' ');
  return words ? words[0]!.toUpperCase() + words.slice(1) : words;
}

export function StatusBadge({ kind, status, label }: { kind: StatusKind; status: string; label?: string }) {
  const tone = STATUS_TONES[kind]?.[status.toLowerCase()] ?? 'neutral';
  return (
    <span
      className={`inline-flex items-center gap-1.5 rounded-full border px-2 py-0.5 text-xs font-medium whitespace-nowrap ${TONES[tone]}`}
    >
      <span aria-hidden="true" className="size-1.5 rounded-full bg-current" />
      {label ?? statusLabel(status)}
    </span>
  );
}
