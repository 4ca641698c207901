// The window's state: the open session and the selected entry. Set by the session's lifecycle
// and the selection (ui/src/session); read by any view that needs them.

import type { OpenedSession } from "./ipc";

let current: OpenedSession | null = null;
let selected: string | null = null;
const listeners = new Set<() => void>();

/** The open session as the last command that changed it returned it; null before one opens. */
export function session(): OpenedSession | null {
  return current;
}

/** The entry selected on the graph (set at the click, before its detail is drawn), or null. */
export function selectedId(): string | null {
  return selected;
}

export function setSession(s: OpenedSession | null): void {
  current = s;
  changed();
}

export function setSelectedId(id: string | null): void {
  selected = id;
  changed();
}

/** Calls `listener` after every change of the session or the selection; returns the call that
 * stops it. */
export function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

function changed(): void {
  for (const l of [...listeners]) l();
}
