// The top bar's search in the open session: Enter jumps to the first hit, Enter again (same
// text) to the next one.

import { api, call } from "../ipc";
import { $ } from "../dom";
import { report } from "../notice";
import * as store from "../store";
import { jumpTo } from "./selection";

let searchHits: { entryId: string; row: number }[] = [];
let searchPos = 0;

export async function search(): Promise<void> {
  const q = ($("search") as HTMLInputElement).value;
  if (!store.session() || !q.trim()) return;
  try {
    if (searchHits.length && ($("search") as HTMLInputElement).dataset.q === q) {
      searchPos = (searchPos + 1) % searchHits.length;
    } else {
      searchHits = await call(api.searchSession(q));
      searchPos = 0;
      ($("search") as HTMLInputElement).dataset.q = q;
    }
    $("search-status").textContent = searchHits.length ? `${searchPos + 1}/${searchHits.length}` : "no match";
    if (searchHits.length) await jumpTo(searchHits[searchPos].entryId);
  } catch (e) {
    report(e);
  }
}
