// The notice line: news nobody asked for (the file grew under Pi) must not hide the notice that
// explains it (Pi's time limit passed), and must not pile up either.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { notify } from "../src/notice";

const line = () => document.getElementById("notice")!;

describe("notice line", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_000_000);
    document.body.innerHTML = `<div id="notice" hidden></div>`;
  });
  afterEach(() => vi.useRealTimers());

  it("an aside follows a recent error and keeps its colour", () => {
    notify("The time limit passed: Pi wrote its own draft.", "error");
    vi.setSystemTime(1_002_000);
    notify("The session file grew by 1 entry.", "aside");
    expect(line().textContent).toBe("The time limit passed: Pi wrote its own draft. The session file grew by 1 entry.");
    expect(line().className).toBe("notice error");
  });

  it("a later aside replaces the earlier one, not the notice it follows", () => {
    notify("Pi compacted s.jsonl.");
    notify("The session file grew by 1 entry.", "aside");
    notify("The session file grew by 2 entries.", "aside");
    expect(line().textContent).toBe("Pi compacted s.jsonl. The session file grew by 2 entries.");
    expect(line().className).toBe("notice info");
  });

  it("an aside stands alone once the notice is old, hidden or replaced", () => {
    notify("Refused.", "error");
    vi.setSystemTime(1_016_000);
    notify("Grew.", "aside");
    expect(line().textContent).toBe("Grew.");
    expect(line().className).toBe("notice info");

    notify("Refused again.", "error");
    line().hidden = true;
    notify("Grew again.", "aside");
    expect(line().textContent).toBe("Grew again.");

    notify("Refused a third time.", "error");
    line().textContent = "Reading the whole session…";
    notify("Grew a third time.", "aside");
    expect(line().textContent).toBe("Grew a third time.");
  });

  it("an ordinary notice replaces whatever is shown", () => {
    notify("Refused.", "error");
    notify("Saved.");
    expect(line().textContent).toBe("Saved.");
    expect(line().className).toBe("notice info");
  });
});
