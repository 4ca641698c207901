// The review dialog's artifact ledger: the box that adds a `## Artifacts` section to the text Arbor
// hands back to Pi (Accept and Accept edited), the ledger's lines for Pi's draft, and the probe
// score of the draft by kind without and with it. The box starts as the review preference says.

import type { LedgerView, ReviewPrefs, ScoreByKind } from "../ipc";
import { el } from "../dom";
import { ledgerSummaryText } from "../summary/ledger";

let preferred = false;

/** The review preference the box starts from (the Pi tab's, as Arbor last reported it). */
export function rememberReviewPrefs(p: ReviewPrefs): void {
  preferred = p.artifactLedger;
}

export function ledgerPreferred(): boolean {
  return preferred;
}

const KINDS = ["recall", "artifact", "decision", "continuation"] as const;

function cell(s: ScoreByKind, k: (typeof KINDS)[number]): string {
  const c = s[k];
  return c.probes ? `${c.answered}/${c.probes}` : "–";
}

/** The ledger panel; `checked` is the box's state, `onToggle` gets its new state. */
export function renderReviewLedger(l: LedgerView, checked: boolean, edited: boolean, onToggle: (on: boolean) => void): HTMLElement {
  const box = el("div", "review-ledger");
  box.id = "review-ledger";
  const label = el("label");
  const cb = el("input");
  cb.type = "checkbox";
  cb.id = "review-ledger-box";
  cb.checked = checked;
  cb.addEventListener("change", () => onToggle(cb.checked));
  label.append(cb, ` Add artifact ledger${l.lines.length ? ` (${l.lines.length} line${l.lines.length === 1 ? "" : "s"})` : " (nothing to add)"}`);
  label.title = "What Pi writes gets a ## Artifacts section: the paths, commands and errors of the span that the summary does not mention";
  box.appendChild(label);
  box.appendChild(el("div", "muted small", ledgerSummaryText(l) + (edited ? " (for Pi's draft; your edit gets the ledger of its own text when sent)" : "")));
  if (l.lines.length) {
    const ul = el("ul", "review-ledger-lines small");
    ul.id = "review-ledger-lines";
    for (const line of l.lines) ul.appendChild(el("li", "", line.replace(/^- /, "")));
    box.appendChild(ul);
  }
  const table = el("table", "review-ledger-scores small");
  table.id = "review-ledger-scores";
  const head = el("tr");
  head.append(el("th", "", "probes answered"), el("th", "", "Pi's draft"), el("th", "", "with the ledger"));
  table.appendChild(head);
  for (const k of KINDS) {
    const tr = el("tr");
    tr.dataset.kind = k;
    tr.append(el("td", "", k), el("td", "", cell(l.without, k)), el("td", "", cell(l.with, k)));
    table.appendChild(tr);
  }
  const pct = (s: ScoreByKind) => (s.score == null ? "–" : `${Math.round(s.score * 100)} %`);
  const total = el("tr");
  total.append(el("td", "", "score"), el("td", "", pct(l.without)), el("td", "", pct(l.with)));
  table.appendChild(total);
  box.appendChild(table);
  return box;
}
