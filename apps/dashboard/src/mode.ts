/**
 * The dashboard's mode (docs/architecture.md, Test mode): `live` or `test`, kept per browser in localStorage (not a
 * secret), so it survives reloads and deep links. Every call to the API says which one it means in
 * `X-Svc-Mode` (api.ts reads `currentMode()` when it sends), and the server answers with that
 * mode's objects only.
 *
 * The tab holds its mode in memory, read once from storage: a call never sends a mode other than
 * the one the banner shows. Switching (here, or in another tab of the same browser: the `storage`
 * event) tells the listeners; api.ts resets the query cache then. This module imports nothing of
 * the app, so api.ts can read the mode without an import cycle.
 */
import { useSyncExternalStore } from 'react';

export type Mode = 'live' | 'test';

const STORAGE_KEY = 'svc.dashboard.mode';

function storedMode(): Mode {
  try {
    return localStorage.getItem(STORAGE_KEY) === 'test' ? 'test' : 'live';
  } catch {
    // Storage refused (a privacy setting): live, the default, for this tab.
    return 'live';
  }
}

let mode: Mode = storedMode();
const listeners = new Set<() => void>();

/** The mode every call of this tab sends now. */
export function currentMode(): Mode {
  return mode;
}

function switchTo(next: Mode): void {
  if (next === mode) return;
  mode = next;
  for (const listener of listeners) listener();
}

/** The `Test mode` switch: this tab switches at once, the choice is kept for the next loads. */
export function setMode(next: Mode): void {
  try {
    localStorage.setItem(STORAGE_KEY, next);
  } catch {
    // Not kept across loads; this tab still switches.
  }
  switchTo(next);
}

// Another tab of this browser switched: follow it, so both show the same mode as the header says.
if (typeof window !== 'undefined') {
  window.addEventListener('storage', (event) => {
    if (event.key === STORAGE_KEY || event.key === null) switchTo(storedMode());
  });
}

/** Calls `listener` after every switch of this tab's mode; returns the way to stop. */
export function onModeSwitch(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The mode, re-rendering when it switches. */
export function useMode(): Mode {
  return useSyncExternalStore(onModeSwitch, currentMode);
}
