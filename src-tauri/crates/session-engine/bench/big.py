#!/usr/bin/env python3
"""The engine and `arbor-cli` on one session too big for Pi (a million entries, 2.6 GB), against
the minimal Rust reader (rs-limit `tree`) and the file's size, rounds interleaved, medians.

Pi cannot open a file over 512 MiB (ERR_STRING_TOO_LONG), so `compare.py`'s Pi side is replaced
by the reader: open + tree + leaf path against `rs-limit tree` (RS_MMAP=1, as compare.py), peak
memory against the file's size. The other operations have no reference; their figures are
absolute (context at the leaf, compaction, navigation, a label's append through the CLI).

  python3 big.py --file s1m.jsonl --rs PATH/rs-limit --arbor PATH/engine_bench \
      --cli PATH/arbor-cli [--before-arbor OLD/engine_bench --before-cli OLD/arbor-cli] [--runs 3]

The file's .meta.json (scripts/gen-sessions.mjs) names the branches to navigate to. Appends
(engine_bench append, arbor-cli label) go to one copy of the file, made once beside it and
deleted at the end (it grows by about a thousand entries a round). The open's ratio pairs each
round's open with the faster of the reader's two runs in that round (one before, one after).
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time

from compare import timed  # the same measurement of one process, beside this file


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True)
    ap.add_argument("--rs", required=True)
    ap.add_argument("--arbor", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--before-arbor")
    ap.add_argument("--before-cli")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    f = a.file
    meta = json.load(open(f + ".meta.json"))
    recent = meta["branches"][-1]["abandonedLeafId"]
    oldest = meta["branches"][0]["abandonedLeafId"]
    leaf = meta.get("leafId")
    size_mb = os.path.getsize(f) / 1048576
    copy = f + ".append-copy.jsonl"
    shutil.copyfile(f, copy)
    sides = [("after", a.arbor, a.cli)]
    if a.before_arbor:
        sides.append(("before", a.before_arbor, a.before_cli or a.cli))
    res = {}

    def add(key, r):
        res.setdefault(key, []).append(r)

    try:
        for rnd in range(1, a.runs + 1):
            t = time.time()
            subprocess.run(["cat", f], stdout=subprocess.DEVNULL)
            load = os.getloadavg()[0]
            add(("load avg",), {"out": {"ms": load}, "wall": load, "rss": 0})
            # Sides alternate their order from round to round.
            order = sides if rnd % 2 else list(reversed(sides))
            add(("rs", "open"), timed([a.rs, "tree", f], {"RS_MMAP": "1"}))
            for name, eng, cli in order:
                add((name, "open"), timed([eng, "load", f]))
            add(("rs", "open2"), timed([a.rs, "tree", f], {"RS_MMAP": "1"}))
            for name, eng, cli in order:
                add((name, "context"), timed([eng, "context", f]))
                add((name, "compact"), timed([eng, "compact", f]))
                add((name, "navRecent"), timed([eng, "navigate", f, recent]))
                add((name, "navOldest"), timed([eng, "navigate", f, oldest]))
                add((name, "inspect"), timed([cli, "inspect", f]))
                add((name, "append"), timed([eng, "append", copy, "1000"]))
                target = leaf or recent
                add((name, "label"), timed([cli, "label", copy, "--entry", target, "--text", f"big {rnd}"]))
            print(f"round {rnd}/{a.runs} done in {time.time() - t:.0f} s (load {load:.2f})", file=sys.stderr)
    finally:
        for p in (copy, copy + ".arbor-lock"):
            if os.path.exists(p):
                os.unlink(p)

    med = statistics.median

    def ms(r):
        o = r["out"]
        if "read_ms" in o:
            return o["read_ms"] + o["total_ms"]
        return o.get("ms", r["wall"])

    rs = res[("rs", "open")] + res[("rs", "open2")]
    rs_pairs = [min(ms(x), ms(y)) for x, y in zip(res[("rs", "open")], res[("rs", "open2")])]
    loads = ", ".join("%.2f" % r["wall"] for r in res[("load avg",)])
    lines = [
        f"file {f}: {size_mb:.0f} MiB; load average per round {loads}",
        f"rs-limit tree: {med([ms(r) for r in rs]):.0f} ms (process wall {med([r['wall'] for r in rs]):.0f} ms), peak {med([r['rss'] for r in rs]):.0f} MB",
        "| side | op | ms (median) | process wall ms | peak RSS MB | RSS / file | vs rs-limit tree |",
        "|---|---|---|---|---|---|---|",
    ]
    summary = {}
    for name, _, _ in sides:
        for op in ["open", "context", "compact", "navRecent", "navOldest", "inspect", "append", "label"]:
            rr = res[(name, op)]
            row = {
                "ms": med([ms(r) for r in rr]),
                "wall": med([r["wall"] for r in rr]),
                "rss": med([r["rss"] for r in rr]),
            }
            vs = ""
            if op == "open":
                row["overRs"] = med([ms(q) / r for q, r in zip(rr, rs_pairs)])
                vs = f"{row['overRs']:.2f}×"
            if op == "inspect":
                row["overRsWall"] = med([q["wall"] / r["wall"] for q, r in zip(rr, res[("rs", "open")])])
                vs = f"{row['overRsWall']:.2f}× (process wall)"
            if op == "append":
                o = [r["out"] for r in rr]
                vs = "p50/p99/max µs " + "/".join(f"{med([x[k] for x in o]):.0f}" for k in ("medianUs", "p99Us", "maxUs"))
            summary[f"{name}/{op}"] = row
            lines.append(
                f"| {name} | {op} | {row['ms']:.1f} | {row['wall']:.0f} | {row['rss']:.0f} | {row['rss'] / size_mb:.3f} | {vs} |"
            )
    print("\n".join(lines))
    print(json.dumps(summary), file=sys.stderr)


if __name__ == "__main__":
    main()
