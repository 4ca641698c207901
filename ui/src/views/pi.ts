// The Pi tab: how Arbor answers Pi's compactions (review, watch, off; the time limit), whether
// Arbor is listening, and Arbor's extension in Pi (where it is installed, its version; Install
// and Remove, for every session of the user or for one project folder).

import { api, call } from "../ipc";
import type { PiExtensionStatus, ReviewStatus } from "../ipc";
import { $, el } from "../dom";
import { notify, report } from "../notice";
import { rememberReviewPrefs } from "../review/ledger";

function project(): string | null {
  const p = ($("ext-project") as HTMLInputElement).value.trim();
  return p || null;
}

function showReviewer(r: ReviewStatus): void {
  ($("review-policy") as HTMLSelectElement).value = r.prefs.policy;
  ($("review-timeout") as HTMLInputElement).value = String(Math.round((r.prefs.timeoutSecs / 60) * 100) / 100);
  ($("review-ledger") as HTMLInputElement).checked = r.prefs.artifactLedger;
  rememberReviewPrefs(r.prefs);
  const parts: string[] = [];
  if (r.listening) parts.push(`Listening on ${r.socket}.`);
  else if (r.prefs.policy === "off") parts.push("Off: Pi does not ask Arbor.");
  if (r.problem) parts.push(`Not listening: ${r.problem}`);
  parts.push(...r.notes);
  const s = $("review-status");
  s.textContent = parts.join(" ");
  s.classList.toggle("error", !!r.problem);
}

function showStatus(st: PiExtensionStatus): void {
  $("ext-version").textContent = `version ${st.extensionVersion}`;
  const box = $("ext-locations");
  box.replaceChildren();
  for (const l of st.locations) {
    const what = !l.present
      ? "not installed"
      : !l.arbor
        ? "another file of that name (left alone)"
        : l.current
          ? "installed"
          : l.version === st.extensionVersion
            ? "installed, a changed copy (Install replaces it with this Arbor's)"
            : `installed, version ${l.version ?? "?"} (Install replaces it with this Arbor's ${st.extensionVersion})`;
    const row = el("div", "ext-location small", `${l.scope === "global" ? "All sessions" : "This project"}: ${what}`);
    row.dataset.scope = l.scope;
    row.dataset.installed = String(l.present && l.arbor);
    row.title = l.path;
    box.appendChild(row);
  }
  showReviewer(st.reviewer);
}

export async function refreshPiTab(): Promise<void> {
  showStatus(await call(api.getPiExtensionStatus(project())));
}

export function initPiTab(): void {
  $("btn-save-review").addEventListener("click", () => {
    const minutes = Number(($("review-timeout") as HTMLInputElement).value);
    const policy = ($("review-policy") as HTMLSelectElement).value as ReviewStatus["prefs"]["policy"];
    if (!(minutes > 0)) {
      notify("The time limit is a number of minutes above 0.", "error");
      return;
    }
    const artifactLedger = ($("review-ledger") as HTMLInputElement).checked;
    call(api.saveReviewPrefs({ policy, timeoutSecs: Math.max(1, Math.round(minutes * 60)), artifactLedger }))
      .then((r) => {
        showReviewer(r);
        notify(policy === "off" ? "Pi no longer asks Arbor." : `Saved: ${policy}, ${minutes} min.`);
      })
      .catch(report);
  });
  $("btn-ext-install").addEventListener("click", () => {
    const btn = $("btn-ext-install") as HTMLButtonElement;
    btn.disabled = true;
    $("review-status").textContent = "Installing, then starting Pi once with the extension to check it…";
    call(api.installPiExtension(project()))
      .then((r) => {
        showStatus(r.status);
        notify(r.note, r.warn ? "error" : "info");
      })
      .catch(report)
      .finally(() => (btn.disabled = false));
  });
  $("btn-ext-remove").addEventListener("click", () => {
    call(api.removePiExtension(project()))
      .then((st) => {
        showStatus(st);
        notify("Arbor's extension is removed; Pi no longer asks Arbor from its next start.");
      })
      .catch(report);
  });
  $("ext-project").addEventListener("change", () => void refreshPiTab().catch(report));
}
