// Pure helpers of forks across files (unit-tested in ui/test/forks.test.ts): what a picker card
// says of a fork and of a session's forks, and the head of a fork's parent path.

import type { ForkView, SessionRow } from "../ipc";

export function baseName(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).pop() ?? path;
}

/** "forked from <parent>" on a fork's card ("…, which is no longer there" when the file is gone). */
export function forkedFromText(s: Pick<SessionRow, "forkedFrom">): string | null {
  const f = s.forkedFrom;
  if (!f) return null;
  const name = f.name ?? baseName(f.path);
  return f.exists ? `forked from ${name}` : `forked from ${name}, which is no longer there`;
}

/** "1 fork", "3 forks", or "" for none. */
export function forkCountText(n: number): string {
  return n === 0 ? "" : n === 1 ? "1 fork" : `${n} forks`;
}

/** The parent's rows the strip draws: those this session does not hold, and the fork point. A
 * `/fork` copies the parent's path with its ids, so those rows are already in the graph below
 * and drawing them twice would only push the fork's own entries down. */
export function stripRows(v: ForkView): ForkView["rows"] {
  return v.rows.filter((r) => !isCopied(v, r));
}

/** A row of the parent's path that this session holds a copy of (the fork point aside). */
export function isCopied(v: ForkView, r: ForkView["rows"][number]): boolean {
  return r.inFork && r.entryId !== v.forkPointId;
}

/** The head of the parent path above a fork's graph. */
export function stripHead(v: ForkView): string {
  if (v.status !== "resolves" || !v.rows.length) return v.sentence[0].toUpperCase() + v.sentence.slice(1);
  const name = v.parentName ?? baseName(v.parentPath);
  const copied = v.rows.length - stripRows(v).length;
  if (copied) {
    const n = copied === 1 ? "1 entry" : `${copied} entries`;
    return `Forked from ${name} at ${v.forkPointId}: this session starts with a copy of its path (${n}, in the graph below). Read-only here; click an entry to open the parent there.`;
  }
  const more = v.earlier ? ` (${v.earlier} earlier entries not shown)` : "";
  return `Forked from ${name}: its path up to the fork point${more}. Read-only here; click an entry to open the parent there.`;
}
