// The UI's one door to Rust: only this module imports the generated bindings.
import { commands } from "./bindings";
import type { IpcError } from "./bindings";
export type * from "./bindings";

/** A rejected command, carrying the typed `{kind, message, hint}`. */
export class CommandError extends Error {
  constructor(public readonly ipc: IpcError) {
    super(ipc.message);
  }
}

type Res<T> = { status: "ok"; data: T } | { status: "error"; error: IpcError };

/** Unwrap a command result; errors become a CommandError so callers can branch on `kind`. */
export async function call<T>(p: Promise<Res<T>>): Promise<T> {
  const r = await p;
  if (r.status === "ok") return r.data;
  throw new CommandError(r.error);
}

export const api = commands;
