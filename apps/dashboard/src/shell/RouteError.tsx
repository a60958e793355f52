/** Each route's error boundary: the failure in words and a way on, never a blank screen. */
import { Link, useRouter, type ErrorComponentProps } from '@tanstack/react-router';
import { apiFailure } from '../api';
import { buttonClass } from '../ui/button';

export function RouteError({ error, reset }: ErrorComponentProps) {
  const router = useRouter();
  const failure = apiFailure(error);
  const heading =
    failure.status === 404 ? 'Not found' : failure.status === 403 ? 'Not allowed' : 'Something went wrong';
  return (
    <section className="route-error" role="alert" aria-labelledby="route-error-title">
      <h1 id="route-error-title">{heading}</h1>
      <p>{failure.status === 403 ? `You do not have permission for this. ${failure.message}` : failure.message}</p>
      <div className="actions">
        <button
          type="button"
          className={buttonClass('secondary')}
          onClick={() => {
            reset();
            void router.invalidate();
          }}
        >
          Retry
        </button>
        <Link to="/" className={buttonClass('secondary')}>
          Back to the dashboard
        </Link>
      </div>
    </section>
  );
}

export function NotFound() {
  return (
    <main className="centered">
      <h1>Page not found</h1>
      <p>There is no page at this address.</p>
      <Link to="/">Back to the dashboard</Link>
    </main>
  );
}
