import type { ReactNode } from 'react';

/** The signed-out pages' frame: one column, the page's heading, a main landmark. */
export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth" id="main">
      <p className="brand">svc</p>
      <h1>{title}</h1>
      {children}
    </main>
  );
}
