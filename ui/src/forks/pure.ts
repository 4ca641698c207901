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

/** The head of the parent path above a fork's graph. */
export function stripHead(v: ForkView): string {
  if (v.status !== "resolves" || !v.rows.length) return v.sentence[0].toUpperCase() + v.sentence.slice(1);
  const more = v.earlier ? ` (${v.earlier} earlier entries not shown)` : "";
  return `Forked from ${v.parentName ?? baseName(v.parentPath)}: its path up to the fork point${more}. Read-only here; click an entry to open the parent there.`;
}
