// @vitest-environment jsdom
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { SummaryView } from "../src/ipc";

/** The views asked for, answered when the test says so (summary views are made off the app's main
 *  thread, so two asked in a row can answer in either order). */
const pending: { id: string; answer: (v: SummaryView) => void }[] = [];

vi.mock("../src/ipc/bindings", () => ({
  commands: {
    getSummaryView: (id: string) =>
      new Promise((resolve) => pending.push({ id, answer: (v) => resolve({ status: "ok", data: v }) })),
    // The quality panel and the hooks line fill in later: never, here.
    getSummaryQuality: () => new Promise(() => {}),
    getHooks: () => new Promise(() => {}),
  },
}));

const { holdWorkbenchDuring, showWorkbench } = await import("../src/summary/workbench");

const view = (entryId: string, editable: boolean): SummaryView => ({
  entryId,
  kind: "compaction",
  timestamp: "2025-03-01T09:00:00.000Z",
  text: "## Goal\n- x",
  sections: [],
  appendixRaw: "",
  readFiles: [],
  modifiedFiles: [],
  tokensBefore: 1000,
  firstKeptEntryId: null,
  firstKeptFound: false,
  span: { count: 2, firstId: "a", lastId: "b", exact: true },
  author: "pi",
  authorDetail: "",
  turnPrefix: null,
  history: [],
  editable,
  editRefusal: editable ? null : "not the compaction that governs the context at the leaf",
  governingEntryId: editable ? entryId : null,
  check: { entryId, previousEntryId: null, dropped: [], moved: [], retention: { facts: [], mentioned: 0, total: 0 } },
  diffBaseId: null,
  diffBaseNote: "Nothing to compare with",
  others: [],
  computeMs: 1,
});

const deps = { jumpTo: async () => {}, afterWrite: async () => {}, notify: () => {}, report: () => {}, bringBack: () => {} };

const host = (entryId: string): HTMLElement => {
  const h = document.createElement("div");
  h.dataset.entryId = entryId;
  const plain = document.createElement("div");
  plain.className = "blk-summary";
  h.appendChild(plain);
  document.body.replaceChildren(h);
  return h;
};

const editButton = (h: HTMLElement) =>
  [...h.querySelectorAll<HTMLButtonElement>("#workbench button")].find((b) => b.textContent === "Edit text");

describe("showWorkbench", () => {
  beforeEach(() => pending.splice(0));

  it("shows the view asked for last when an earlier one answers after it (select, then Continue)", async () => {
    const h = host("c1");
    const first = showWorkbench(h, "c1", deps);
    const second = showWorkbench(h, "c1", deps);
    expect(pending.map((p) => p.id)).toEqual(["c1", "c1"]);
    pending[1].answer(view("c1", true));
    expect(await second).not.toBeNull();
    pending[0].answer(view("c1", false));
    expect(await first).toBeNull();
    expect(h.querySelectorAll("#workbench")).toHaveLength(1);
    expect(h.querySelector(".blk-summary")).toBeNull();
    expect(editButton(h)?.disabled).toBe(false);
  });

  it("shows nothing once the selection moved on", async () => {
    const h = host("c1");
    const shown = showWorkbench(h, "c1", deps);
    h.dataset.entryId = "other";
    pending[0].answer(view("c1", true));
    expect(await shown).toBeNull();
    expect(h.querySelector("#workbench")).toBeNull();
  });

  it("holds a view arriving during a Continue, and drops it when the Continue draws its own", async () => {
    const h = host("c1");
    const before = showWorkbench(h, "c1", deps);
    let finish = () => {};
    const continuing = holdWorkbenchDuring(new Promise<void>((r) => (finish = r)));
    pending[0].answer(view("c1", false));
    // Answered, but not drawn while the Continue runs.
    await new Promise((r) => setTimeout(r, 0));
    expect(h.querySelector("#workbench")).toBeNull();
    // The Continue draws the same summary anew (it is the leaf now): its view waits too.
    const own = showWorkbench(h, "c1", deps);
    pending[1].answer(view("c1", true));
    await new Promise((r) => setTimeout(r, 0));
    expect(h.querySelector("#workbench")).toBeNull();
    finish();
    await continuing;
    expect(await before).toBeNull();
    expect(await own).not.toBeNull();
    expect(h.querySelectorAll("#workbench")).toHaveLength(1);
    expect(editButton(h)?.disabled).toBe(false);
  });

  it("draws a held view after all when the Continue failed", async () => {
    const h = host("c1");
    const shown = showWorkbench(h, "c1", deps);
    let fail = (_: Error) => {};
    const continuing = holdWorkbenchDuring(new Promise<void>((_, no) => (fail = no)));
    pending[0].answer(view("c1", true));
    await new Promise((r) => setTimeout(r, 0));
    expect(h.querySelector("#workbench")).toBeNull();
    fail(new Error("the session changed on disk"));
    await expect(continuing).rejects.toThrow("changed on disk");
    expect(await shown).not.toBeNull();
    expect(h.querySelectorAll("#workbench")).toHaveLength(1);
  });
});
