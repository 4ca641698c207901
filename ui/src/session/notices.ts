// OS notifications of summaries written by others (Pi compacted, or summarized a branch, in the
// followed session): the setting in the Notifications section, and a click on a notification,
// which Rust reports over a channel once the window is in front: the summary workbench opens on
// the entry (the session is opened first when another one is open now).

import { Channel } from "@tauri-apps/api/core";
import { api, call, errorText } from "../ipc";
import type { NoticeClick, NoticeSettings } from "../ipc";
import { $ } from "../dom";
import * as store from "../store";
import { showTab } from "../views/tabs";

export interface NoticeDeps {
  openPath: (path: string) => Promise<boolean>;
  jumpTo: (id: string) => Promise<void>;
  notify: (text: string, kind?: "info" | "error") => void;
}

function show(s: NoticeSettings): void {
  ($("notify-summaries") as HTMLInputElement).checked = s.enabled;
  const p = $("notify-problem");
  p.textContent = s.problem ? `Notifications cannot be shown: ${s.problem}.` : "";
  p.hidden = !s.problem;
}

/** Where a click leads: the workbench of `entryId`, in the session it belongs to. */
async function clicked(c: NoticeClick, deps: NoticeDeps): Promise<void> {
  if (store.session()?.path !== c.sessionPath && !(await deps.openPath(c.sessionPath))) return;
  showTab("detail");
  await deps.jumpTo(c.entryId);
  document.body.dataset.noticeOpened = c.entryId;
}

export async function initNotices(deps: NoticeDeps): Promise<void> {
  const box = $("notify-summaries") as HTMLInputElement;
  box.addEventListener("change", () => {
    call(api.setNoticesEnabled(box.checked))
      .then((s) => {
        show(s);
        deps.notify(s.enabled ? "Arbor will notify you when Pi compacts or summarizes a branch." : "Notifications of Pi's summaries are off.");
      })
      .catch((e) => deps.notify(errorText(e), "error"));
  });
  const ch = new Channel<NoticeClick>();
  ch.onmessage = (c) => void clicked(c, deps).catch((e) => deps.notify(errorText(e), "error"));
  try {
    await call(api.noticesSubscribe(ch));
    show(await call(api.noticeSettings()));
  } catch (e) {
    deps.notify(errorText(e), "error");
  }
}
