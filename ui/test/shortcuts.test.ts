import { beforeEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { closeHelp, helpOpen, initShortcuts, matchShortcut, shortcutTable } from "../src/shortcuts";
import type { KeyLike } from "../src/shortcuts";

const tabs = [
  { name: "detail", label: "Entry" },
  { name: "context", label: "Context" },
  { name: "budgets", label: "Budgets" },
  { name: "model", label: "Model" },
];
const table = shortcutTable(tabs);
const key = (k: string, o: Partial<KeyLike> = {}): KeyLike => ({ key: k, code: "", altKey: false, ctrlKey: false, metaKey: false, shiftKey: false, ...o });
const free = { inText: false, targetId: null };
const typing = { inText: true, targetId: "search" };

describe("shortcut table", () => {
  it("has one tab shortcut per tab, numbered in window order", () => {
    const rows = table.filter((s) => s.id.startsWith("tab-"));
    expect(rows.map((s) => [s.id, s.keys])).toEqual([
      ["tab-detail", "Alt+1"],
      ["tab-context", "Alt+2"],
      ["tab-budgets", "Alt+3"],
      ["tab-model", "Alt+4"],
    ]);
    // a tab added later gets the next number
    expect(shortcutTable([...tabs, { name: "timeline", label: "Timeline" }]).find((s) => s.id === "tab-timeline")?.keys).toBe("Alt+5");
  });
  it("ids are unique and every app shortcut has a key to match", () => {
    expect(new Set(table.map((s) => s.id)).size).toBe(table.length);
    for (const s of table) {
      if (s.owner === "app") expect(s.match, s.id).toBeDefined();
      else expect(s.eventKeys?.length, s.id).toBeGreaterThan(0);
    }
  });
  it("no two app shortcuts take the same key in the same place", () => {
    const seen = new Set<string>();
    for (const s of table.filter((x) => x.owner === "app")) {
      const k = JSON.stringify([s.match, s.focus, s.target]);
      expect(seen.has(k), s.id).toBe(false);
      seen.add(k);
    }
  });
  // The handlers that live elsewhere still look for the keys the overlay promises.
  const sources: Record<string, string> = {
    graph: readFileSync(resolve(__dirname, "../src/graph/view.ts"), "utf8"),
    workbench: readFileSync(resolve(__dirname, "../src/summary/workbench.ts"), "utf8"),
    dialogs: readFileSync(resolve(__dirname, "../src/views/dialogs.ts"), "utf8"),
    title: readFileSync(resolve(__dirname, "../src/session/title.ts"), "utf8"),
  };
  for (const s of table.filter((x) => x.owner !== "app")) {
    it(`${s.owner} handles ${s.id} (${s.eventKeys?.join(", ")})`, () => {
      for (const k of s.eventKeys ?? []) expect(sources[s.owner].includes(`"${k}"`) || sources[s.owner].includes(`${k}:`), `${s.owner} handles ${k}`).toBe(true);
    });
  }
});

describe("dispatch", () => {
  it("Alt+digit picks the tab by key code, whatever the layout prints", () => {
    expect(matchShortcut(table, key("¡", { code: "Digit1", altKey: true }), free)?.id).toBe("tab-detail");
    expect(matchShortcut(table, key("3", { code: "Digit3", altKey: true }), typing)?.id).toBe("tab-budgets");
    expect(matchShortcut(table, key("3", { code: "Digit3" }), free)).toBeNull();
    expect(matchShortcut(table, key("5", { code: "Digit5", altKey: true }), free)).toBeNull();
    expect(matchShortcut(table, key("1", { code: "Digit1", altKey: true, ctrlKey: true }), free)).toBeNull();
  });
  it("? and / only when not typing", () => {
    expect(matchShortcut(table, key("?", { shiftKey: true }), free)?.id).toBe("help");
    expect(matchShortcut(table, key("?", { shiftKey: true }), typing)).toBeNull();
    expect(matchShortcut(table, key("/"), free)?.id).toBe("search");
    expect(matchShortcut(table, key("/"), typing)).toBeNull();
  });
  it("Ctrl+Enter sends only from the composer; Alt+C compacts", () => {
    expect(matchShortcut(table, key("Enter", { ctrlKey: true }), { inText: true, targetId: "composer" })?.id).toBe("send");
    expect(matchShortcut(table, key("Enter", { metaKey: true }), { inText: true, targetId: "composer" })?.id).toBe("send");
    expect(matchShortcut(table, key("Enter"), { inText: true, targetId: "composer" })).toBeNull();
    expect(matchShortcut(table, key("Enter", { ctrlKey: true }), { inText: true, targetId: "label-input" })).toBeNull();
    expect(matchShortcut(table, key("c", { code: "KeyC", altKey: true }), free)?.id).toBe("compact");
    expect(matchShortcut(table, key("c", { code: "KeyC" }), free)).toBeNull();
  });
});

describe("in the document", () => {
  const calls: string[] = [];
  beforeEach(() => {
    closeHelp();
    calls.length = 0;
  });
  document.body.innerHTML = `<nav class="tabs"><button class="tab" data-tab="detail">Entry</button><button class="tab" data-tab="context">Context</button></nav>
    <button id="focus-me">x</button><input id="search" /><textarea id="composer"></textarea><div id="picker" hidden></div>`;
  initShortcuts({
    showTab: (n) => calls.push(`tab:${n}`),
    compact: () => calls.push("compact"),
    send: () => calls.push("send"),
    focusSearch: () => calls.push("search"),
  });
  const press = (init: KeyboardEventInit, target: EventTarget = document.activeElement ?? document.body) => {
    const ev = new KeyboardEvent("keydown", { bubbles: true, cancelable: true, ...init });
    target.dispatchEvent(ev);
    return ev;
  };

  it("? opens the list of every shortcut; Escape closes it and gives the focus back", () => {
    const b = document.getElementById("focus-me") as HTMLButtonElement;
    b.focus();
    press({ key: "?", shiftKey: true });
    expect(helpOpen()).toBe(true);
    const rows = [...document.querySelectorAll("#help-overlay tr")].map((r) => (r as HTMLElement).dataset.id);
    expect(rows).toEqual(shortcutTable([{ name: "detail", label: "Entry" }, { name: "context", label: "Context" }]).map((s) => s.id));
    // keys meant for the window do nothing while the list is open
    press({ key: "2", code: "Digit2", altKey: true });
    expect(calls).toEqual([]);
    press({ key: "Escape" });
    expect(helpOpen()).toBe(false);
    expect(document.activeElement).toBe(b);
  });
  it("? closes it too", () => {
    press({ key: "?", shiftKey: true });
    expect(helpOpen()).toBe(true);
    press({ key: "?", shiftKey: true });
    expect(helpOpen()).toBe(false);
  });
  it("dispatches tabs, compact and send; a picker above the window blocks all but send", () => {
    press({ key: "2", code: "Digit2", altKey: true });
    press({ key: "c", code: "KeyC", altKey: true });
    const ta = document.getElementById("composer") as HTMLTextAreaElement;
    ta.focus();
    press({ key: "Enter", ctrlKey: true });
    press({ key: "?", shiftKey: true }); // typing: no help
    expect(helpOpen()).toBe(false);
    document.getElementById("picker")!.hidden = false;
    (document.getElementById("focus-me") as HTMLButtonElement).focus();
    press({ key: "1", code: "Digit1", altKey: true });
    document.getElementById("picker")!.hidden = true;
    expect(calls).toEqual(["tab:context", "compact", "send"]);
  });
});
