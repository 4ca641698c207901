// Recording-only Pi extension (tests/pi/record/record.mjs loads it with -e): RPC mode has no
// tree-navigation command, so this registers `/arbor-nav <entryId> [label]`, which calls Pi's own
// ctx.navigateTree(targetId, { summarize: true }) (docs/extensions.md, ctx.navigateTree). Pi then
// writes the branch_summary entry itself, with its own summarizer prompt sent to the model.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.registerCommand("arbor-nav", {
    description: "Navigate the session tree to an entry, summarizing the branch left behind",
    handler: async (args, ctx) => {
      const [targetId, label] = args.trim().split(/\s+/);
      if (!targetId) throw new Error("usage: /arbor-nav <entryId> [label]");
      const result = await ctx.navigateTree(targetId, { summarize: true, label: label || undefined });
      if (result.cancelled) throw new Error(`navigation to ${targetId} was cancelled`);
    },
  });
}
