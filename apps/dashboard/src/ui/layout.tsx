/**
 * The frame of a screen: its header (title, a line under it, the main action and a `More actions`
 * menu for the rest), cards holding its sections, skeletons while it waits and empty states that
 * say what to do next. Medusa Admin's order and product pages are the model: a summary first,
 * sections in cards, actions in the header.
 */
import type { ReactNode } from 'react';

export function PageHeader({
  title,
  description,
  back,
  badge,
  actions,
}: {
  title: ReactNode;
  description?: ReactNode;
  /** A link back to the list above this page. */
  back?: ReactNode;
  /** A status badge beside the title. */
  badge?: ReactNode;
  /** The main action(s) and the header's menu, on the right (under the title on phones). */
  actions?: ReactNode;
}) {
  return (
    <header className="mb-6">
      {back && <p className="m-0 mb-2 text-sm">{back}</p>}
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div className="min-w-0">
          <div className="flex flex-wrap items-center gap-3">
            <h1 className="m-0 min-w-0 break-words">{title}</h1>
            {badge}
          </div>
          {description && <div className="m-0 mt-1 text-sm text-muted">{description}</div>}
        </div>
        {actions && <div className="flex flex-wrap items-center gap-2">{actions}</div>}
      </div>
    </header>
  );
}

/**
 * A section in a card: a region named by its heading (so `getByRole('region', { name })` and a
 * screen reader's landmarks find it), actions on the heading's right.
 */
export function Card({
  id,
  title,
  description,
  actions,
  children,
  flush = false,
  className = '',
}: {
  /** The heading's id (the section's accessible name). */
  id: string;
  title: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  /** No padding around the body: a table that runs to the card's edges. */
  flush?: boolean;
  className?: string;
}) {
  return (
    <section aria-labelledby={id} className={`min-w-0 rounded-lg border border-line bg-raised shadow-sm ${className}`}>
      <div className="flex flex-wrap items-center justify-between gap-2 border-b border-line px-5 py-3.5">
        <div className="min-w-0">
          <h2 id={id} className="m-0 text-base">
            {title}
          </h2>
          {description && <p className="m-0 text-sm text-muted">{description}</p>}
        </div>
        {actions && <div className="flex flex-wrap items-center gap-2">{actions}</div>}
      </div>
      <div className={`min-w-0 [&>:first-child]:mt-0 [&>:last-child]:mb-0 ${flush ? '' : 'px-5 py-4'}`}>{children}</div>
    </section>
  );
}

/** A stack of cards (or any sections) with the screen's rhythm between them. */
export function Stack({ children, className = '' }: { children: ReactNode; className?: string }) {
  return <div className={`flex min-w-0 flex-col gap-6 ${className}`}>{children}</div>;
}

/** What an empty list or section says: what it holds once used, and the action that starts it. */
export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="flex flex-col items-center gap-2 px-4 py-8 text-center">
      <p className="m-0 font-medium">{title}</p>
      {children && <div className="m-0 max-w-md text-sm text-muted">{children}</div>}
      {action && <div className="mt-2">{action}</div>}
    </div>
  );
}

/** Grey bars where the screen's content will be, announced once as `label` (role status). */
export function Skeleton({ label, lines = 4 }: { label: string; lines?: number }) {
  return (
    <div role="status" className="flex flex-col gap-3" aria-live="polite">
      <span className="sr-only">{label}</span>
      {Array.from({ length: lines }, (_, index) => (
        <span
          key={index}
          aria-hidden="true"
          className={`block h-4 animate-pulse rounded-sm bg-line motion-reduce:animate-none ${index === 0 ? 'h-7 w-1/3' : index % 3 === 2 ? 'w-2/3' : 'w-full'}`}
        />
      ))}
    </div>
  );
}
