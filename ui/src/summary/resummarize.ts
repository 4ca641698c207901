// Re-summarize & compare: the same span summarized again (another model, other instructions),
// shown beside the existing summary with both retention scores, both probe scores by kind, and
// the diff. Nothing is written
// unless "Use this" appends the alternative as an edit.

import { Channel } from "@tauri-apps/api/core";
import { api, call, errorText } from "../ipc";
import type { ResummaryView, SummaryProgress_Deserialize } from "../ipc";
import { button, el } from "../dom";
import { renderMarkdown } from "../render/markdown";
import type { Bench } from "./bench";
import { renderDiff } from "./diff";
import { scoreLabel } from "./pure";
import { ledgerOption } from "./ledger";
import type { ScoreLike } from "./pure";
import { scoreChips } from "./quality";

/** A column's probe score: overall, then each kind. */
function scoreBox(s: ScoreLike, id: string): HTMLElement {
  const box = el("div", "wb-qhead small");
  box.id = id;
  box.append(el("span", "muted", "quality"), ...scoreChips(s));
  return box;
}

export function openResummarize(b: Bench): void {
  const body = b.openOverlay("Re-summarize the same span and compare (nothing is written)", "wb-resum-view");
  const form = el("div", "wb-resum-form");
  const provider = el("select");
  provider.id = "wb-resum-provider";
  for (const [val, label] of [["", "the model chosen in the Model panel"], ["offline", "offline summarizer"], ["openai", "OpenAI-compatible"], ["anthropic", "Anthropic"], ["gemini", "Google Gemini"]]) {
    const o = el("option", undefined, label);
    o.value = val;
    provider.appendChild(o);
  }
  const model = el("input");
  model.id = "wb-resum-model";
  model.placeholder = "model (for another provider)";
  const instr = el("textarea");
  instr.id = "wb-resum-instructions";
  instr.rows = 2;
  instr.placeholder = "Optional instructions (what to keep, what to focus on)";
  const go = button("Generate", () => void start(), "primary");
  go.id = "wb-resum-go";
  const stop = button("Cancel", () => void call(api.cancelSummary()).catch(() => {}));
  stop.disabled = true;
  form.append("Summarize with ", provider, " ", model, instr, go, stop);
  body.appendChild(form);
  const progress = el("pre", "wb-progress");
  body.appendChild(progress);
  const out = el("div", "wb-resum-out");
  out.id = "wb-resum-out";
  body.appendChild(out);
  const start = async () => {
    go.disabled = true;
    stop.disabled = false;
    progress.textContent = "";
    out.replaceChildren();
    const ch = new Channel<SummaryProgress_Deserialize>();
    ch.onmessage = (p) => {
      if (p.kind === "text" && p.delta) progress.textContent = (progress.textContent ?? "") + p.delta;
      else if (p.message) progress.textContent = (progress.textContent ?? "") + `\n[${p.message}]\n`;
    };
    try {
      const r = await call(api.resummarizeSummary(b.v.entryId, provider.value || null, model.value.trim() || null, instr.value.trim() || null, ch));
      progress.textContent = `${r.summarizer} · ${Math.round(r.elapsedMs ?? 0)} ms${r.notices.length ? ` · ${r.notices.join("; ")}` : ""}`;
      out.replaceChildren(compare(b, r));
    } catch (e) {
      progress.textContent = errorText(e);
    } finally {
      go.disabled = false;
      stop.disabled = true;
    }
  };
}

/** The existing summary and the alternative side by side, "Use this", and the diff. */
function compare(b: Bench, r: ResummaryView): HTMLElement {
  const box = el("div", "wb-compare");
  const cols = el("div", "wb-cols");
  const col = (title: string, score: string, quality: ScoreLike, text: string, id: string) => {
    const c = el("div", "wb-col");
    c.id = id;
    const h = el("div", "wb-h");
    h.append(title, " ", el("span", "wb-score", score));
    c.appendChild(h);
    // Both texts answer the same probes (made from the same span): the scores compare directly.
    c.appendChild(scoreBox(quality, `${id}-quality`));
    c.appendChild(renderMarkdown(text));
    return c;
  };
  cols.appendChild(col(`Existing (${b.v.entryId})`, scoreLabel(r.retentionExisting.mentioned, r.retentionExisting.total), r.qualityExisting, b.v.text, "wb-col-existing"));
  cols.appendChild(col(`Alternative (${r.summarizer})`, scoreLabel(r.retentionNew.mentioned, r.retentionNew.total), r.qualityNew, r.text, "wb-col-new"));
  box.appendChild(cols);
  const actions = el("div", "wb-actions");
  const ledger = ledgerOption(b.v.entryId, () => r.text, "wb-resum-ledger");
  const use = button("Use this", () => void b.write(() => call(api.saveSummaryEdit(b.v.entryId, r.text, ledger.checked())), "edit"), "primary", b.v.editRefusal ?? "Append it as an edit of this summary");
  use.id = "wb-use-this";
  use.disabled = !b.v.editable;
  actions.appendChild(use);
  if (!b.v.editable && b.v.editRefusal) actions.appendChild(el("span", "muted small", b.v.editRefusal));
  box.appendChild(actions);
  if (b.v.editable) box.appendChild(ledger.el);
  box.appendChild(el("div", "wb-h", "Diff: existing → alternative"));
  box.appendChild(renderDiff(r.diff));
  return box;
}
