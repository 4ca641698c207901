// What a summary kept of what it replaced: the drop alarm (items of the previous summary no longer
// carried, each with "Add back", and items moved between sections) and the retention list (the
// facts of the summarized span, and whether the summary mentions each, with Bring back… on the
// entry a fact comes from: the model no longer sees it verbatim once the summary replaced it).

import { button, el, fillOnOpen } from "../dom";
import { link } from "./bench";
import type { Bench } from "./bench";
import { addBack, isPlaceholder, scoreLabel } from "./pure";

/** Opens the editor with a dropped item put back in its section. */
function addBackItem(b: Bench, d: { section: string; text: string }): void {
  const a = addBack(b.v.sections, b.v.appendixRaw, d);
  b.openEditor(a.sectionIndex, a.text);
}

export function renderAlarm(b: Bench): HTMLElement {
  const c = b.v.check;
  const box = el("div", "wb-alarm");
  box.id = "wb-alarm";
  if (!c.previousEntryId) {
    box.appendChild(el("div", "muted small", b.v.kind === "compaction" ? "First compaction on this path: nothing to compare with." : ""));
    return box;
  }
  const moved = c.moved.filter((m) => !isPlaceholder(m.text));
  if (!c.dropped.length && !moved.length) {
    box.appendChild(el("div", "wb-ok small", `Carries every constraint, done item, decision and critical fact of ${c.previousEntryId}.`));
    return box;
  }
  if (c.dropped.length) {
    box.appendChild(el("div", "wb-h wb-bad", `Drop alarm: ${c.dropped.length} item${c.dropped.length === 1 ? "" : "s"} of ${c.previousEntryId} no longer carried`));
    const ul = el("ul", "wb-dropped");
    for (const d of c.dropped) {
      const li = el("li");
      li.appendChild(el("span", "wb-sec", d.section));
      li.appendChild(el("span", "wb-prev", d.text));
      const add = button("Add back", () => addBackItem(b, d), "wb-addback", b.v.editable ? "Open the editor with this item restored" : b.v.editRefusal ?? "");
      add.disabled = !b.v.editable;
      li.appendChild(add);
      ul.appendChild(li);
    }
    box.appendChild(ul);
  }
  if (moved.length) {
    box.appendChild(el("div", "wb-h", "Moved since the previous summary"));
    const ul = el("ul", "wb-moved");
    for (const m of moved) ul.appendChild(el("li", undefined, `${m.text}  (${m.from} → ${m.to})`));
    box.appendChild(ul);
  }
  return box;
}

export function renderRetention(b: Bench): HTMLElement {
  const r = b.v.check.retention;
  const d = el("details", "wb-retention");
  d.id = "wb-retention";
  d.appendChild(el("summary", undefined, `Retention: ${scoreLabel(r.mentioned, r.total)} of the span mentioned`));
  const ul = el("ul", "wb-factlist");
  d.appendChild(ul);
  fillOnOpen(d, () => fillFacts(b, ul));
  return d;
}

/** The retention facts' rows, the span's unmentioned first. */
function fillFacts(b: Bench, ul: HTMLElement): void {
  const r = b.v.check.retention;
  const sorted = [...r.facts].sort((x, y) => Number(x.mentioned) - Number(y.mentioned));
  for (const f of sorted.slice(0, 300)) {
    const li = el("li", f.mentioned ? "yes" : "no");
    li.appendChild(el("span", "wb-mark", f.mentioned ? "✓" : "✗"));
    li.appendChild(el("span", `wb-kind k-${f.kind}`, f.kind));
    const t = el("span", "wb-fact", f.text);
    t.title = f.text;
    li.appendChild(t);
    li.appendChild(link(f.sourceEntryId, () => void b.deps.jumpTo(f.sourceEntryId), "Go to the entry this fact comes from"));
    const back = button("Bring back…", () => b.deps.bringBack([f.sourceEntryId]), "wb-bringback small", `Bring entry ${f.sourceEntryId} back into the model's context as a message at the leaf (a preview first)`);
    back.dataset.entryId = f.sourceEntryId;
    li.appendChild(back);
    ul.appendChild(li);
  }
  if (r.facts.length > 300) ul.appendChild(el("li", "muted", `… and ${r.facts.length - 300} more`));
}
