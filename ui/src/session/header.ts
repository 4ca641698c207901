// The open session in the window's frame: its title, the leaf and counts in the status line, and
// the graph's size. Drawn after every command that returns the session.

import type { GraphWindow, OpenedSession } from "../ipc";
import { $ } from "../dom";
import { graph } from "../graph/shared";
import * as store from "../store";

/** `rows`: the new layout's rows already in hand, in whole chunks (Continue's answer). */
export function showSession(s: OpenedSession, rows?: GraphWindow | null): void {
  store.setSession(s);
  $("session-title").textContent = `${s.name ?? "(unnamed session)"}${s.isDemo ? " · demo" : ""}`;
  $("session-title").title = s.path;
  $("status-leaf").textContent = s.leafId ?? "(none)";
  $("status-info").textContent = `${s.entryCount} entries · ${s.totalRows} rows · ${s.lanes} lanes${s.diagnostics.length ? ` · ${s.diagnostics.length} skipped lines` : ""}`;
  graph().setSession(s.path);
  graph().reset(s.totalRows, s.lanes, rows);
}
