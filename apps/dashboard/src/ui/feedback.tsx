/** How screens show loading, failures and API errors: where the action was taken, in words. */
import type { ReactNode } from 'react';
import { Button } from 'react-aria-components';
import { apiFailure } from '../api';
import { buttonClass } from './button';
import { Skeleton } from './layout';

/**
 * An API error, read out when it appears (role alert), next to the control that caused it; with
 * its issues listed, or only `issues` when a form has shown the others at their fields.
 */
export function ErrorNote({
  error,
  issues,
}: {
  error: unknown;
  issues?: ReadonlyArray<{ path: string; message: string }>;
}) {
  if (!error) return null;
  const failure = apiFailure(error);
  const listed = issues ?? failure.issues;
  return (
    <div role="alert" className="error-note">
      <p className="m-0">{failure.message}</p>
      {listed.length > 0 && (
        <ul>
          {listed.map((issue) => (
            <li key={`${issue.path}:${issue.message}`}>
              {issue.path ? `${issue.path}: ` : ''}
              {issue.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A query's state: its data, a skeleton while it waits, or its error with a retry when the connection is lost. */
export function Loaded<T>({
  query,
  children,
  label = 'Loading…',
  lines,
}: {
  query: { data: T | undefined; error: unknown; isPending: boolean; refetch: () => unknown };
  children: (data: T) => ReactNode;
  /** What the skeleton's status says to a screen reader. */
  label?: string;
  /** How many bars the skeleton draws. */
  lines?: number;
}) {
  if (query.error) {
    const failure = apiFailure(query.error);
    return (
      <div role="alert" className="error-note">
        <p className="m-0">{failure.message}</p>
        {(failure.offline || failure.status >= 500) && (
          <Button className={buttonClass('secondary', 'mt-2')} onPress={() => void query.refetch()}>
            Retry
          </Button>
        )}
      </div>
    );
  }
  if (query.isPending || query.data === undefined) return <Skeleton label={label} lines={lines} />;
  return <>{children(query.data)}</>;
}
