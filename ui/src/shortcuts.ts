// Keyboard shortcuts: one table feeds both the key handler and the help overlay (`?`), so what
// the overlay lists is what the keys do. Entries with `owner: "app"` are dispatched here; the
// others are handled where they live (the graph, the summary workbench, the dialogs' Escape) and
// are listed here so the overlay shows them. ui/test/shortcuts.test.ts checks that each of those
// handlers still looks for the keys this table names.

import "./shortcuts.css";

/** Which key an app shortcut reacts to. `code` (e.g. "Digit1") is used with Alt, where `key`
 * depends on the keyboard layout. */
export interface KeyMatch {
  key?: string;
  code?: string;
  alt?: boolean;
  ctrl?: boolean;
  /** Ctrl or Meta (Cmd): either counts. */
  ctrlOrMeta?: boolean;
  shift?: boolean;
}

export type Owner = "app" | "graph" | "workbench" | "dialogs" | "title";

export interface Shortcut {
  id: string;
  /** As shown in the overlay. */
  keys: string;
  what: string;
  /** Where it works. */
  where: string;
  owner: Owner;
  /** App shortcuts: the key to match. */
  match?: KeyMatch;
  /** "text": only in the element `target` (the composer); "notText": not while typing. */
  focus?: "any" | "notText" | "target";
  target?: string;
  /** Other owners: the `KeyboardEvent.key` values their handler looks for. */
  eventKeys?: string[];
}

export interface TabInfo {
  name: string;
  label: string;
}

/** The full table. Tabs are numbered in the order the window shows them (Alt+1 … Alt+9). */
export function shortcutTable(tabs: TabInfo[]): Shortcut[] {
  const tabRows: Shortcut[] = tabs.slice(0, 9).map((t, i) => ({
    id: `tab-${t.name}`,
    keys: `Alt+${i + 1}`,
    what: `Show the ${t.label} tab`,
    where: "anywhere",
    owner: "app",
    match: { code: `Digit${i + 1}`, alt: true },
    focus: "any",
  }));
  return [
    { id: "help", keys: "?", what: "Show or hide this list of shortcuts", where: "not while typing", owner: "app", match: { key: "?" }, focus: "notText" },
    { id: "search", keys: "/", what: "Search this session", where: "not while typing", owner: "app", match: { key: "/" }, focus: "notText" },
    ...tabRows,
    { id: "compact", keys: "Alt+C", what: "Compact… (open the Compact dialog)", where: "anywhere", owner: "app", match: { code: "KeyC", alt: true }, focus: "any" },
    {
      id: "send",
      keys: "Ctrl+Enter",
      what: "Send the composer's message",
      where: "composer",
      owner: "app",
      match: { key: "Enter", ctrlOrMeta: true },
      focus: "target",
      target: "composer",
    },
    { id: "escape", keys: "Escape", what: "Close the open dialog, this list, the session picker or the Compare panel; clear the picked nodes", where: "anywhere", owner: "dialogs", eventKeys: ["Escape"] },
    { id: "graph-move", keys: "↑ / ↓", what: "Move the cursor one row", where: "graph", owner: "graph", eventKeys: ["ArrowUp", "ArrowDown"] },
    { id: "graph-page", keys: "PageUp / PageDown", what: "Move the cursor one screen", where: "graph", owner: "graph", eventKeys: ["PageUp", "PageDown"] },
    { id: "graph-ends", keys: "Home / End", what: "First / last row", where: "graph", owner: "graph", eventKeys: ["Home", "End"] },
    { id: "graph-enter", keys: "Enter", what: "Select the entry, or expand a folded run", where: "graph", owner: "graph", eventKeys: ["Enter"] },
    { id: "graph-pick", keys: "Space / Ctrl+click", what: "Pick the node too (or take it back): compare two, bring back several", where: "graph", owner: "graph", eventKeys: [" "] },
    { id: "graph-parent", keys: "←", what: "Go to the parent entry", where: "graph", owner: "graph", eventKeys: ["ArrowLeft"] },
    { id: "graph-leaf", keys: "l", what: "Go to the leaf", where: "graph", owner: "graph", eventKeys: ["l"] },
    { id: "graph-zoom", keys: "+ / −", what: "Zoom in / out", where: "graph", owner: "graph", eventKeys: ["+", "-"] },
    { id: "rename", keys: "F2", what: "Rename the session (edit its title; Enter saves, Escape cancels)", where: "not while typing", owner: "title", eventKeys: ["F2"] },
    { id: "wb-save", keys: "Ctrl+Enter", what: "Save the edited summary section", where: "summary editor", owner: "workbench", eventKeys: ["Enter"] },
    { id: "wb-close", keys: "Escape", what: "Close the summary editor or comparison", where: "summary editor", owner: "workbench", eventKeys: ["Escape"] },
  ];
}

/** What the dispatcher needs of a key event. */
export interface KeyLike {
  key: string;
  code?: string;
  altKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
}

export interface FocusInfo {
  /** Focus is in an input, textarea, select or editable element. */
  inText: boolean;
  /** The focused element's id. */
  targetId: string | null;
}

function keyMatches(m: KeyMatch, e: KeyLike): boolean {
  if (m.code !== undefined && e.code !== m.code) return false;
  if (m.key !== undefined && e.key !== m.key) return false;
  if (!!m.alt !== e.altKey) return false;
  if (m.ctrlOrMeta) {
    if (!(e.ctrlKey || e.metaKey)) return false;
  } else if (!!m.ctrl !== e.ctrlKey || e.metaKey) return false;
  // "?" is Shift+/ on most layouts: Shift only counts when the entry asks for it by code.
  if (m.shift !== undefined && m.shift !== e.shiftKey) return false;
  return true;
}

/** The app shortcut this key event triggers, or null. */
export function matchShortcut(table: Shortcut[], e: KeyLike, f: FocusInfo): Shortcut | null {
  for (const s of table) {
    if (s.owner !== "app" || !s.match || !keyMatches(s.match, e)) continue;
    if (s.focus === "notText" && f.inText) continue;
    if (s.focus === "target" && f.targetId !== s.target) continue;
    return s;
  }
  return null;
}

// ---- in the window ---------------------------------------------------------------------------

export interface ShortcutActions {
  showTab(name: string): void;
  compact(): void;
  send(): void;
  focusSearch(): void;
}

function focusInfo(): FocusInfo {
  const a = document.activeElement as HTMLElement | null;
  const tag = a?.tagName ?? "";
  const inText = tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || !!a?.isContentEditable;
  return { inText, targetId: a?.id || null };
}

/** The tabs as the window shows them now (another tab added later is picked up). */
export function currentTabs(): TabInfo[] {
  return [...document.querySelectorAll<HTMLElement>(".tabs .tab")].map((t) => ({ name: t.dataset.tab ?? "", label: (t.textContent ?? "").trim() })).filter((t) => t.name);
}

let returnFocus: HTMLElement | null = null;

export function helpOpen(): boolean {
  const o = document.getElementById("help-overlay");
  return !!o && !o.hidden;
}

function buildHelp(table: Shortcut[]): HTMLElement {
  let o = document.getElementById("help-overlay");
  if (!o) {
    o = document.createElement("div");
    o.id = "help-overlay";
    o.className = "help-overlay";
    o.hidden = true;
    o.setAttribute("role", "dialog");
    o.setAttribute("aria-label", "Keyboard shortcuts");
    o.addEventListener("click", (e) => {
      if (e.target === o) closeHelp();
    });
    document.body.appendChild(o);
  }
  const box = document.createElement("div");
  box.className = "help-box";
  box.tabIndex = -1;
  const head = document.createElement("div");
  head.className = "help-head";
  const title = document.createElement("b");
  title.textContent = "Keyboard shortcuts";
  const close = document.createElement("button");
  close.type = "button";
  close.id = "help-close";
  close.textContent = "Close";
  close.addEventListener("click", () => closeHelp());
  head.append(title, close);
  const t = document.createElement("table");
  t.className = "help-table";
  for (const s of table) {
    const tr = document.createElement("tr");
    tr.dataset.id = s.id;
    const k = document.createElement("td");
    const kbd = document.createElement("kbd");
    kbd.textContent = s.keys;
    k.appendChild(kbd);
    const w = document.createElement("td");
    w.textContent = s.what;
    const where = document.createElement("td");
    where.className = "muted small";
    where.textContent = s.where;
    tr.append(k, w, where);
    t.appendChild(tr);
  }
  const foot = document.createElement("div");
  foot.className = "muted small";
  foot.textContent = "Escape or ? closes this list.";
  box.append(head, t, foot);
  o.replaceChildren(box);
  return o;
}

export function openHelp(): void {
  const a = document.activeElement;
  returnFocus = a instanceof HTMLElement && a !== document.body ? a : null;
  const o = buildHelp(shortcutTable(currentTabs()));
  o.hidden = false;
  (o.querySelector(".help-box") as HTMLElement).focus();
}

export function closeHelp(): void {
  const o = document.getElementById("help-overlay");
  if (!o || o.hidden) return;
  o.hidden = true;
  const back = returnFocus;
  returnFocus = null;
  if (back?.isConnected) back.focus();
}

/** Is a modal (a dialog, the picker, a workbench overlay) above the main window? */
function modalOpen(): boolean {
  const shown = (id: string) => {
    const e = document.getElementById(id);
    return !!e && !e.hidden;
  };
  return shown("sum-dialog") || shown("picker") || !!document.querySelector(".wb-overlay");
}

/** Install the one key handler (window, capture phase: it sees keys before the document's). */
export function initShortcuts(act: ShortcutActions): void {
  window.addEventListener(
    "keydown",
    (e) => {
      if (helpOpen()) {
        // The list is modal: Escape or ? closes it, nothing else reaches the window.
        if (e.key === "Escape" || e.key === "?") {
          e.preventDefault();
          e.stopImmediatePropagation();
          closeHelp();
        }
        return;
      }
      if (e.defaultPrevented || e.isComposing) return;
      const s = matchShortcut(shortcutTable(currentTabs()), e, focusInfo());
      if (!s) return;
      if (s.id !== "send" && modalOpen()) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      if (s.id === "help") openHelp();
      else if (s.id === "search") act.focusSearch();
      else if (s.id === "compact") act.compact();
      else if (s.id === "send") act.send();
      else if (s.id.startsWith("tab-")) act.showTab(s.id.slice(4));
    },
    true,
  );
}
