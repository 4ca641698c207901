// Judge mode in the workbench's quality panel: the Model tab's model answers the summary's
// probes from the summary alone and grades each answer (Rust: commands/quality.rs
// `judge_summary`). Its result is shown apart from the offline score, named with its model.
import { Channel } from "@tauri-apps/api/core";
import { api, call } from "../ipc";
import type { JudgeProgressView, JudgedView } from "../ipc";
import { button, el } from "../dom";
import { link } from "./bench";
import type { Bench } from "./bench";
import { judgeProgressText, judgeVerdictMark } from "./pure";
import type { ScoreLike } from "./pure";

/** The panel's "Judge with model" button and the box its result goes into. */
/** `chips` draws a score as the panel does (passed in: the panel imports this file). */
export function judgeButton(b: Bench, box: HTMLElement, chips: (s: ScoreLike) => HTMLElement[]): HTMLButtonElement {
  const out = el("div", "wb-judged small");
  out.id = "wb-judged";
  const run = button("Judge with model", () => void start(), "wb-judge", "Ask the model chosen in the Model tab to answer each probe from this summary alone, and to grade its answers (two calls per probe, at most 8 probes of each kind). Its score is shown apart from Arbor's offline one.");
  run.id = "wb-judge";
  queueMicrotask(() => box.appendChild(out));
  async function start(): Promise<void> {
    run.disabled = true;
    out.replaceChildren(el("span", "muted", "Judging: asking the model…"));
    const stop = button("Cancel", () => void call(api.cancelSummary()).catch(() => {}));
    stop.id = "wb-judge-cancel";
    out.appendChild(stop);
    const ch = new Channel<JudgeProgressView>();
    ch.onmessage = (p) => {
      const first = out.firstChild;
      if (first) first.textContent = judgeProgressText(p.done, p.total);
    };
    try {
      const j = await call(api.judgeSummary(b.v.entryId, ch));
      out.replaceChildren(render(b, j, chips));
    } catch (e) {
      out.replaceChildren(el("div", "wb-warn", `Not judged: ${e instanceof Error ? e.message : String(e)}`));
    } finally {
      run.disabled = false;
    }
  }
  return run;
}

function render(b: Bench, j: JudgedView, chips: (s: ScoreLike) => HTMLElement[]): HTMLElement {
  const d = el("div", "wb-judged-result");
  const head = el("div", "wb-qhead");
  head.appendChild(el("span", "wb-h", `Judged by ${j.provider} ${j.model}`));
  const [overall, ...kinds] = chips(j.score);
  overall.id = "wb-judged-score";
  head.append(overall, ...kinds);
  d.appendChild(head);
  d.appendChild(el("div", "muted", "The model's own answers from the summary alone, graded against the span's expected answers (a partial answer counts half). Not mixed with the offline score above."));
  const ul = el("ul", "wb-factlist wb-judgelist");
  for (const p of j.probes) {
    const li = el("li", p.verdict);
    li.dataset.verdict = p.verdict;
    li.appendChild(el("span", "wb-mark", judgeVerdictMark(p.verdict)));
    li.appendChild(el("span", `wb-kind k-${p.kind}`, p.kind));
    const q = el("span", "wb-fact", p.question);
    q.title = `expected: ${p.expected}\nanswer: ${p.answer}\n${p.reason}`;
    li.appendChild(q);
    li.appendChild(el("span", "wb-expected", p.answer));
    li.appendChild(link(p.sourceEntryId, () => void b.deps.jumpTo(p.sourceEntryId), "Reveal the entry this probe was made from on the graph"));
    ul.appendChild(li);
  }
  d.appendChild(ul);
  return d;
}
