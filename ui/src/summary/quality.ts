// Is this summary good enough to keep working from? The workbench's quality panel, beside the
// drop alarm: the probe score by kind, the probes (answered or not, each with the entry it was
// made from), the items nothing in the span says, growth, and for a compaction the cost of
// forgetting (what the agent did again after it). The cards get their citations from the same
// answer. Judged offline in Rust (`get_summary_quality`, off the main thread), after the
// workbench is drawn: the panel says "judging…" until then.

import { api, call } from "../ipc";
import type { SummaryQualityView } from "../ipc";
import { el, fillOnOpen } from "../dom";
import { link } from "./bench";
import { judgeButton } from "./judge";
import type { Bench } from "./bench";
import {
  forgettingLines,
  growthFlagText,
  growthLine,
  kindScoreLabel,
  overallLabel,
  placeCitations,
  PROBE_KINDS,
  qualityClass,
  sourceLabel,
} from "./pure";
import type { CitedLike, ScoreLike } from "./pure";

/** What the workbench says of an item nothing in its span supports. */
export const UNSUPPORTED = "unsupported: nothing in its span says this";

/** The overall score and one chip per kind (percent, and answered of asked). */
export function scoreChips(s: ScoreLike): HTMLElement[] {
  const overall = el("span", `wb-qscore ${s.score === null ? "" : qualityClass(s.score)}`, overallLabel(s));
  overall.title = "The share of probes the summary answers: the mean over the kinds that have probes";
  const out = [overall];
  for (const k of PROBE_KINDS) {
    const ks = s.byKind[k];
    const chip = el("span", `wb-qkind ${ks.probes ? qualityClass(ks.answered / ks.probes) : "none"}`, kindScoreLabel(k, ks));
    chip.dataset.kind = k;
    out.push(chip);
  }
  return out;
}

/** The panel's box, filled by `fillQuality` when the judgement arrives. */
export function renderQualityBox(): HTMLElement {
  const box = el("div", "wb-quality");
  box.id = "wb-quality";
  box.appendChild(el("div", "muted small", "Judging the summary (probes, citations, growth)…"));
  return box;
}

/** Asks for the judgement of the workbench's summary; null when it failed (reported) or when the
 *  workbench is gone meanwhile. */
export async function loadQuality(b: Bench, root: HTMLElement): Promise<SummaryQualityView | null> {
  try {
    const q = await call(api.getSummaryQuality(b.v.entryId));
    return root.isConnected ? q : null;
  } catch (e) {
    const box = root.querySelector("#wb-quality");
    box?.replaceChildren(el("div", "wb-warn small", "The summary could not be judged."));
    b.deps.report(e);
    return null;
  }
}

export function fillQuality(b: Bench, box: HTMLElement, q: SummaryQualityView): void {
  box.replaceChildren();
  box.dataset.score = q.score.score === null ? "" : String(q.score.score);
  const head = el("div", "wb-qhead");
  head.appendChild(el("span", "wb-h", "Quality"));
  const [overall, ...kinds] = scoreChips(q.score);
  overall.id = "wb-quality-score";
  head.append(overall, ...kinds);
  head.appendChild(judgeButton(b, box, scoreChips));
  box.appendChild(head);

  const growth = el("div", "wb-growth small");
  growth.id = "wb-growth";
  growth.append(`Growth: ${growthLine(q.growth)}`);
  const flag = growthFlagText(q.growth.flag);
  if (flag) growth.appendChild(el("span", "wb-bad", ` · ${flag}`));
  box.appendChild(growth);

  if (q.forgetting) {
    const f = el("div", `wb-forgetting small ${q.forgetting.cost > 0 ? "wb-bad" : ""}`);
    f.id = "wb-forgetting";
    f.appendChild(el("span", "wb-h", "After it: "));
    f.append(forgettingLines(q.forgetting).join(" · "));
    box.appendChild(f);
  }

  if (q.unsupported.length) {
    const u = el("div", "wb-unsupported-list");
    u.id = "wb-unsupported";
    u.appendChild(el("div", "wb-h wb-bad", `${q.unsupported.length} unsupported: nothing in the span says ${q.unsupported.length === 1 ? "this" : "these"}`));
    const ul = el("ul");
    for (const x of q.unsupported) {
      const li = el("li");
      li.append(el("span", "wb-sec", x.section), el("span", undefined, x.text));
      ul.appendChild(li);
    }
    u.appendChild(ul);
    box.appendChild(u);
  }

  box.appendChild(renderProbes(b, q));
}

function renderProbes(b: Bench, q: SummaryQualityView): HTMLElement {
  const d = el("details", "wb-probes");
  d.id = "wb-probes";
  const missed = q.probes.filter((p) => !p.answered).length;
  d.appendChild(el("summary", undefined, q.probes.length ? `Probes: ${q.probes.length - missed} of ${q.probes.length} answered${missed ? `, ${missed} not` : ""}` : "Probes: none"));
  if (!q.probes.length) {
    d.appendChild(el("div", "muted small wb-empty", "No probes: the span holds no value, path, command, error, decision or request to ask this summary about."));
    d.open = true;
    return d;
  }
  const ul = el("ul", "wb-factlist wb-probelist");
  d.appendChild(ul);
  fillOnOpen(d, () => fillProbes(b, q, ul));
  return d;
}

/** The probes' rows, the unanswered first: they are what the summary lost. */
function fillProbes(b: Bench, q: SummaryQualityView, ul: HTMLElement): void {
  const sorted = [...q.probes].sort((x, y) => Number(x.answered) - Number(y.answered));
  for (const p of sorted.slice(0, MAX_PROBES_SHOWN)) {
    const li = el("li", p.answered ? "yes" : "no");
    li.dataset.kind = p.kind;
    li.appendChild(el("span", "wb-mark", p.answered ? "✓" : "✗"));
    li.appendChild(el("span", `wb-kind k-${p.kind}`, p.kind));
    const t = el("span", "wb-fact wb-question", p.question);
    t.title = `${p.question}\nexpected: ${p.expected}`;
    li.appendChild(t);
    const exp = el("span", "wb-expected mono", p.expected);
    exp.title = p.expected;
    li.appendChild(exp);
    const src = link(p.sourceEntryId, () => void b.deps.jumpTo(p.sourceEntryId), "Reveal the entry this probe was made from on the graph");
    src.classList.add("wb-probe-source");
    li.appendChild(src);
    ul.appendChild(li);
  }
  if (sorted.length > MAX_PROBES_SHOWN) ul.appendChild(el("li", "muted", `… and ${sorted.length - MAX_PROBES_SHOWN} more`));
}

/** Probes drawn in the list (a big span asks hundreds of artifact probes; the unanswered, which
 *  come first, are what matters). */
const MAX_PROBES_SHOWN = 300;

/** A citation's line in a card: its sources (a click reveals one on the graph), or the mark of
 *  an item nothing supports. */
function citeLine(b: Bench, c: CitedLike): HTMLElement {
  const s = el("span", c.unsupported ? "wb-cite wb-unsupported" : "wb-cite");
  if (c.unsupported) {
    s.textContent = UNSUPPORTED;
    return s;
  }
  if (!c.sources.length) {
    s.classList.add("muted");
    s.textContent = "no source";
    return s;
  }
  s.append("← ");
  for (const src of c.sources) {
    const a = link(sourceLabel(src), () => void b.deps.jumpTo(src.entryId), "Reveal this source on the graph (the share of the item's words it holds)");
    a.classList.add("wb-cite-source");
    a.dataset.entryId = src.entryId;
    s.appendChild(a);
  }
  return s;
}

/** Puts each citation on its card: beside its item, or under the section's text for a line of
 *  free text. */
export function applyCitations(b: Bench, root: HTMLElement, q: SummaryQualityView): void {
  const { items, lines } = placeCitations(b.v.sections, q.citations);
  for (const [key, c] of items) {
    const [sec, item] = key.split(":");
    const li = root.querySelector(`.wb-card[data-index="${sec}"] li.wb-item[data-item="${item}"]`);
    if (!li) continue;
    li.querySelector(".wb-cite")?.remove();
    if (c.unsupported) li.classList.add("unsupported");
    li.appendChild(citeLine(b, c));
  }
  for (const [sec, cites] of lines) {
    const card = root.querySelector(`.wb-card[data-index="${sec}"]`);
    if (!card) continue;
    card.querySelector(".wb-cite-lines")?.remove();
    const ul = el("ul", "wb-cite-lines");
    for (const c of cites) {
      const li = el("li", c.unsupported ? "unsupported" : "");
      const t = el("span", "wb-cite-text", c.text);
      t.title = c.text;
      li.append(t, citeLine(b, c));
      ul.appendChild(li);
    }
    card.appendChild(ul);
  }
}
