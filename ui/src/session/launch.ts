// Starting on a file (`arbor FILE.jsonl`) and a second launch handing its file to this window:
// Rust keeps the command line's file until the UI subscribes, then sends later launches' files
// over a channel (no event permission needed). Files open through the ordinary open path.

import { Channel } from "@tauri-apps/api/core";
import { api, call } from "../ipc";
import type { LaunchRequest } from "../ipc";

/** Subscribes; returns the file to open now (the command line's), or null. `open` gets the
 * files of later launches. */
export async function startLaunch(open: (path: string) => Promise<unknown>): Promise<string | null> {
  const ch = new Channel<LaunchRequest>();
  ch.onmessage = (r) => void open(r.path);
  return call(api.launchSubscribe(ch));
}
