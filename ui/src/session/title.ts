// Renaming the open session from the header: click the title (or press F2) to edit it, Enter
// saves (Pi's session_info entry is appended), Escape cancels. An empty name is refused; a
// read-only session shows its banner instead of an editor.

import { api, call } from "../ipc";
import type { OpenedSession } from "../ipc";
import { $ } from "../dom";
import * as store from "../store";
import "./session.css";

export interface TitleDeps {
  /** The read-only banner (with its Save as v3 copy button). */
  readOnly(why: string): void;
  afterRename(s: OpenedSession): Promise<void>;
  notify(text: string, kind?: "info" | "error"): void;
  report(e: unknown): void;
}

let deps: TitleDeps;

const title = () => $("session-title");

export function editing(): boolean {
  return !!document.getElementById("session-title-input");
}

export function startRename(): void {
  const s = store.session();
  if (!s || editing()) return;
  if (s.readOnly) {
    deps.readOnly(s.readOnly);
    return;
  }
  const t = title();
  const input = document.createElement("input");
  input.id = "session-title-input";
  input.type = "text";
  input.className = "session-title-input";
  input.value = s.name ?? "";
  input.placeholder = "Session name (Enter saves, Escape cancels)";
  input.maxLength = 200;
  input.setAttribute("aria-label", "Session name");
  let busy = false;
  const close = () => {
    input.remove();
    t.hidden = false;
  };
  input.addEventListener("keydown", async (e) => {
    e.stopPropagation();
    if (e.key === "Escape") {
      e.preventDefault();
      close();
    } else if (e.key === "Enter" && !busy) {
      e.preventDefault();
      const name = input.value.trim();
      if (!name) {
        deps.notify("The name is empty, so the session was not renamed: type a name, or press Escape to keep the old one.", "error");
        return;
      }
      if (name === (s.name ?? "")) {
        close();
        return;
      }
      busy = true;
      try {
        const r = await call(api.renameSession(name));
        close();
        await deps.afterRename(r);
        deps.notify(`Renamed to "${r.name ?? name}" (a session_info entry was appended, as Pi does; Pi shows this name).`);
      } catch (err) {
        deps.report(err);
      } finally {
        busy = false;
      }
    }
  });
  input.addEventListener("blur", () => {
    if (!busy) close();
  });
  t.hidden = true;
  t.after(input);
  input.focus();
  input.select();
}

export function initTitleEdit(d: TitleDeps): void {
  deps = d;
  const t = title();
  t.classList.add("editable");
  t.tabIndex = 0;
  t.setAttribute("role", "button");
  t.addEventListener("click", () => startRename());
  t.addEventListener("keydown", (e) => {
    if (e.key === "Enter") startRename();
  });
  document.addEventListener("keydown", (e) => {
    if (e.key !== "F2" || e.altKey || e.ctrlKey || e.metaKey) return;
    const a = document.activeElement;
    if (a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA") && a.id !== "session-title-input") return;
    e.preventDefault();
    startRename();
  });
}
