// @vitest-environment jsdom
import { describe, expect, test } from "vitest";
import type { LedgerView, ScoreByKind } from "../src/ipc";
import { ledgerScoreText, ledgerSummaryText } from "../src/summary/ledger";
import { renderReviewLedger } from "../src/review/ledger";

const kinds = (artifact: [number, number], score: number | null): ScoreByKind => ({
  score,
  recall: { probes: 2, answered: 1 },
  artifact: { probes: artifact[1], answered: artifact[0] },
  decision: { probes: 0, answered: 0 },
  continuation: { probes: 2, answered: 2 },
});

const view = (lines: string[]): LedgerView => ({
  lines,
  text: "## Goal\nx\n\n## Artifacts\n" + lines.join("\n"),
  tokensAdded: 23.4,
  without: kinds([3, 10], 0.5),
  with: kinds([9, 10], 0.65),
});

describe("the artifact ledger's texts", () => {
  test("the scores say artifact probes and the overall score, before → after", () => {
    expect(ledgerScoreText(kinds([3, 10], 0.5), kinds([9, 10], null))).toBe("artifact probes 3/10 → 9/10; score 50 % → –");
  });

  test("a ledger is summed up in one sentence, or said to add nothing", () => {
    expect(ledgerSummaryText(view(["- ran `make`"]))).toBe("1 line, +23 tokens; artifact probes 3/10 → 9/10; score 50 % → 65 %");
    expect(ledgerSummaryText(view([]))).toMatch(/adds nothing/);
  });

  test("the review's panel lists the lines and the probes by kind, and reports the box", () => {
    let toggled: boolean | null = null;
    const box = renderReviewLedger(view(["- ran `make`", "- error: boom"]), true, false, (on) => (toggled = on));
    const cb = box.querySelector<HTMLInputElement>("#review-ledger-box")!;
    expect(cb.checked).toBe(true);
    expect(box.textContent).toContain("Add artifact ledger (2 lines)");
    expect([...box.querySelectorAll("#review-ledger-lines li")].map((li) => li.textContent)).toEqual(["ran `make`", "error: boom"]);
    const row = box.querySelector('tr[data-kind="artifact"]')!;
    expect([...row.querySelectorAll("td")].map((td) => td.textContent)).toEqual(["artifact", "3/10", "9/10"]);
    expect(box.querySelector('tr[data-kind="decision"]')!.textContent).toContain("–");
    cb.checked = false;
    cb.dispatchEvent(new Event("change"));
    expect(toggled).toBe(false);
  });
});
