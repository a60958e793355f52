/** How screens show loading, failures and API errors: where the action was taken, in words. */
import type { ReactNode } from 'react';
import { Button } from 'react-aria-components';
import { apiFailure } from '../api';

/** An API error, read out when it appears (role alert), next to the control that caused it. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const failure = apiFailure(error);
  return (
    <div role="alert" className="error-note">
      <p>{failure.message}</p>
      {failure.issues.length > 0 && (
        <ul>
          {failure.issues.map((issue) => (
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

/** A query's state: its data, a loading line, or its error with a retry when the connection is lost. */
export function Loaded<T>({
  query,
  children,
  label = 'Loading…',
}: {
  query: { data: T | undefined; error: unknown; isPending: boolean; refetch: () => unknown };
  children: (data: T) => ReactNode;
  label?: string;
}) {
  if (query.error) {
    const failure = apiFailure(query.error);
    return (
      <div role="alert" className="error-note">
        <p>{failure.message}</p>
        {(failure.offline || failure.status >= 500) && (
          <Button className="button" onPress={() => void query.refetch()}>
            Retry
          </Button>
        )}
      </div>
    );
  }
  if (query.isPending || query.data === undefined) {
    return (
      <p className="muted" role="status">
        {label}
      </p>
    );
  }
  return <>{children(query.data)}</>;
}
