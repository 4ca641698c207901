// The workbench's head: what kind of summary, its retention score and dropped items, who wrote
// it, the span it summarizes and the entries it points at, and its actions (edit, diff,
// re-summarize, copy, revert).

import { button, el } from "../dom";
import { formatTokens } from "../format";
import { copyText } from "../session/copy";
import { link } from "./bench";
import type { Bench } from "./bench";
import { openDiff } from "./diff";
import { authorLabel, scoreLabel } from "./pure";
import { openResummarize } from "./resummarize";

export function renderHead(b: Bench): HTMLElement {
  const v = b.v;
  const h = el("div", "wb-head");
  const title = el("div", "wb-title");
  title.appendChild(el("b", undefined, v.kind === "compaction" ? "Compaction summary" : "Branch summary"));
  const score = el("span", "wb-score", scoreLabel(v.check.retention.mentioned, v.check.retention.total));
  score.id = "wb-score";
  score.title = "Retention: facts of the summarized span that the summary mentions";
  title.appendChild(score);
  if (v.check.dropped.length) {
    const d = el("span", "wb-dropped-badge", `⚠ ${v.check.dropped.length} dropped`);
    d.id = "wb-dropped-badge";
    title.appendChild(d);
  }
  h.appendChild(title);
  const facts = el("dl", "wb-facts");
  const row = (k: string, ...vals: (string | Node)[]) => {
    facts.appendChild(el("dt", undefined, k));
    const dd = el("dd");
    for (const x of vals) dd.append(x);
    facts.appendChild(dd);
  };
  row("written by", authorLabel(v.author, v.authorDetail));
  if (v.tokensBefore !== null) row("tokensBefore", formatTokens(v.tokensBefore));
  const sp = v.span;
  if (sp.count > 0 && sp.firstId) {
    const reveal = link(`${sp.count} entries`, () => void b.deps.jumpTo(sp.firstId!), "Reveal and select the span's first entry on the graph");
    reveal.id = "wb-span-link";
    row(
      "span",
      reveal,
      ` ${sp.firstId} → ${sp.lastId ?? "?"}`,
      sp.exact ? "" : " (inferred: the branch that was left)",
    );
  } else {
    row("span", "nothing before it (empty span)");
  }
  if (v.firstKeptEntryId) {
    const fk = v.firstKeptFound
      ? link(v.firstKeptEntryId, () => void b.deps.jumpTo(v.firstKeptEntryId!), "Reveal the first kept entry")
      : el("span", "wb-warn", `${v.firstKeptEntryId} (not in this file: Pi keeps everything after the compaction only)`);
    row("firstKeptEntryId", fk);
  }
  if (v.check.previousEntryId) {
    const prev = v.check.previousEntryId;
    row("previous", link(prev, () => void b.deps.jumpTo(prev)), " ", link("diff", () => void openDiff(b, prev, v.entryId)));
  }
  h.appendChild(facts);
  const actions = el("div", "wb-actions");
  const edit = button("Edit text", () => b.openEditor(null, v.text), "", v.editable ? "Edit the whole summary as text" : v.editRefusal ?? "");
  edit.id = "wb-edit-raw";
  edit.disabled = !v.editable;
  actions.appendChild(edit);
  // The engine picks what to compare with (an edit: its original; a compaction: the one before
  // it; a branch summary: the summary before it on its path); with nothing, the button says why.
  const isVersion = v.history.length > 1 && v.history[0]?.entryId !== v.entryId;
  const diffFrom = v.diffBaseId;
  const diff = button("Diff…", () => { if (diffFrom) void openDiff(b, diffFrom, v.entryId); }, "", v.diffBaseNote);
  diff.id = "wb-diff";
  diff.disabled = !diffFrom;
  actions.appendChild(diff);
  const re = button("Re-summarize & compare…", () => openResummarize(b));
  re.id = "wb-resummarize";
  actions.appendChild(re);
  const cp = button("Copy", () => void copyText(v.text, "the summary's markdown", b.deps), "", "Copy the summary's markdown to the clipboard");
  cp.id = "wb-copy";
  actions.appendChild(cp);
  if (isVersion && v.history.find((h) => h.entryId === v.entryId)?.kind === "edit") {
    const rv = button(`Revert to original`, () => void b.revert(), "", v.editable ? `Append the text of ${v.history[0].entryId} again` : v.editRefusal ?? "");
    rv.id = "wb-revert";
    rv.disabled = !v.editable;
    actions.appendChild(rv);
  }
  h.appendChild(actions);
  if (!v.editable && v.editRefusal) h.appendChild(el("div", "muted small wb-refusal", v.editRefusal));
  return h;
}
