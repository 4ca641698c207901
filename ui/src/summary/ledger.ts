// "Add artifact ledger": a box beside a workbench write (saving an edit, using a re-summary) that
// appends a `## Artifacts` section of what the text leaves out of its span's paths, commands and
// errors. Checked at first when Arbor's setting says so; once checked it shows what it would add
// and the artifact probes it answers (a preview: nothing is written until the write itself).

import "./ledger.css";
import { api, call, errorText } from "../ipc";
import type { LedgerView, ScoreByKind } from "../ipc";
import { el } from "../dom";

export interface LedgerOption {
  readonly el: HTMLElement;
  /** Whether the write should add the ledger. */
  checked(): boolean;
}

/** "answered/probes" of the artifact probes, and the overall score, without → with the ledger. */
export function ledgerScoreText(without: ScoreByKind, withLedger: ScoreByKind): string {
  const a = (s: ScoreByKind) => `${s.artifact.answered}/${s.artifact.probes}`;
  const pct = (s: ScoreByKind) => (s.score == null ? "–" : `${Math.round(s.score * 100)} %`);
  return `artifact probes ${a(without)} → ${a(withLedger)}; score ${pct(without)} → ${pct(withLedger)}`;
}

/** One sentence on a ledger: how many lines, what they cost, what they answer. */
export function ledgerSummaryText(l: LedgerView): string {
  if (!l.lines.length) return "The text mentions every artifact of its span: the ledger adds nothing.";
  const n = l.lines.length;
  return `${n} line${n === 1 ? "" : "s"}, +${Math.round(l.tokensAdded ?? 0)} tokens; ${ledgerScoreText(l.without, l.with)}`;
}

/** The box for the summary `entryId`; `text()` is the text the write would save. */
export function ledgerOption(entryId: string, text: () => string, id: string): LedgerOption {
  const box = el("div", "wb-ledger");
  const label = el("label", "small");
  const cb = el("input");
  cb.type = "checkbox";
  cb.id = id;
  label.append(cb, " Add artifact ledger");
  label.title = "Append a ## Artifacts section: the paths, commands and errors of this summary's span that the text does not mention";
  const preview = el("div", "wb-ledger-preview muted small");
  preview.id = `${id}-preview`;
  box.append(label, preview);
  let seq = 0;
  const show = async () => {
    const mine = ++seq;
    preview.replaceChildren();
    if (!cb.checked) return;
    preview.textContent = "Checking what the ledger adds…";
    try {
      const l = await call(api.summaryLedgerPreview(entryId, text()));
      if (mine !== seq) return;
      preview.replaceChildren(el("div", "", ledgerSummaryText(l)));
      if (l.lines.length) {
        const ul = el("ul", "wb-ledger-lines");
        for (const line of l.lines) ul.appendChild(el("li", "", line.replace(/^- /, "")));
        preview.appendChild(ul);
      }
    } catch (e) {
      if (mine === seq) preview.textContent = errorText(e);
    }
  };
  cb.addEventListener("change", () => void show());
  // Arbor's setting decides whether the box starts checked.
  void call(api.getHooks())
    .then((h) => {
      if (h.artifactLedger && !cb.checked) {
        cb.checked = true;
        void show();
      }
    })
    .catch(() => undefined);
  return { el: box, checked: () => cb.checked };
}
