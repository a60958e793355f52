/**
 * The looks of a button, for React Aria's `Button`, a native <button> or a router `Link` that acts
 * as one: `primary` for the screen's main action, `secondary` for the others, `danger` only inside
 * the dialog that confirms a destructive action (a list never shows a red button per row), `quiet`
 * for an icon-sized trigger such as a row's action menu.
 */
export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'quiet';

const BASE =
  'inline-flex min-h-10 cursor-pointer items-center justify-center gap-2 rounded-md border px-3.5 py-2 text-sm font-medium whitespace-nowrap no-underline hover:no-underline disabled:cursor-not-allowed disabled:opacity-60 data-disabled:cursor-not-allowed data-disabled:opacity-60';

const VARIANTS: Record<ButtonVariant, string> = {
  primary: 'border-accent bg-accent text-on-accent shadow-sm hover:bg-accent-hover',
  secondary: 'border-line-strong bg-raised text-fg shadow-sm hover:bg-surface',
  danger: 'border-danger bg-danger text-on-danger shadow-sm',
  quiet: 'border-transparent bg-transparent text-fg hover:bg-surface',
};

export function buttonClass(variant: ButtonVariant = 'secondary', extra = ''): string {
  return `${BASE} ${VARIANTS[variant]}${extra ? ` ${extra}` : ''}`;
}
