import type { ReactNode } from 'react';

/** The signed-out pages' frame (and store creation's): one card in the middle, the page's heading, a main landmark. */
export function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main id="main" className="flex min-h-screen justify-center bg-surface px-4 py-10 sm:py-16">
      <div className="w-full max-w-md min-w-0">
        <p className="m-0 mb-6 text-center text-2xl font-bold tracking-tight">svc</p>
        <div className="rounded-lg border border-line bg-raised p-6 shadow-sm sm:p-8">
          <h1 className="m-0 mb-6 text-xl">{title}</h1>
          {children}
        </div>
      </div>
    </main>
  );
}
