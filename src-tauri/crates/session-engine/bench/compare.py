#!/usr/bin/env python3
"""Arbor's engine against Pi's own implementation, op by op, on the same files, in one run.

Each measurement runs in its own process (Pi: pi-bench-op.mjs from the shared bench kit;
Arbor: the `engine_bench` example; the minimal Rust reference: rs-limit `tree`). Rounds are
interleaved; the figures are medians, and the ratios are paired within a round.

  python3 compare.py --data DIR --pi-dir PI_DIR --pi-op PATH/pi-bench-op.mjs \
      --rs PATH/rs-limit --arbor PATH/engine_bench [--runs 3] [--sizes 1k,10k,100k]
      [--arbor-before PATH/engine_bench]

--arbor-before runs a second build of engine_bench (say, the commit before a change) right
after --arbor in every measurement of every round, so a change is measured before and after in
one run; its rows are marked "before".

DIR holds s1k.jsonl, s10k.jsonl, s100k.jsonl and their .meta.json, written by the repository's
scripts/gen-sessions.mjs --seed 42.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time


def timed(cmd, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "@@TIME %e %M"] + cmd, capture_output=True, text=True, env=e)
    wall = (time.perf_counter() - t0) * 1000
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    m = re.search(r"@@TIME ([\d.]+) (\d+)", r.stderr)
    out = [l for l in r.stdout.strip().split("\n") if l.startswith("{")]
    # A program that prints pretty JSON (arbor-cli inspect) gives no one-line result: only its time counts.
    try:
        parsed = json.loads(out[-1]) if out else {}
    except json.JSONDecodeError:
        parsed = {}
    return {"wall": wall, "rss": int(m.group(2)) / 1024 if m else None, "out": parsed}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--pi-dir", required=True)
    ap.add_argument("--pi-op", required=True)
    ap.add_argument("--rs", required=True)
    ap.add_argument("--arbor", required=True)
    ap.add_argument("--arbor-before")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="1k,10k,100k")
    a = ap.parse_args()
    sizes = a.sizes.split(",")
    node = shutil.which("node")
    penv = {"PI_DIR": a.pi_dir}
    res = {}  # (size, op, who) -> list of results

    def add(size, op, who, r):
        res.setdefault((size, op, who), []).append(r)

    for rnd in range(1, a.runs + 1):
        t = time.time()
        for size in sizes:
            f = os.path.join(a.data, f"s{size}.jsonl")
            meta = json.load(open(f + ".meta.json"))
            recent = meta["branches"][-1]["abandonedLeafId"]
            oldest = meta["branches"][0]["abandonedLeafId"]
            subprocess.run(["cat", f], stdout=subprocess.DEVNULL)
            add(size, "open", "pi", timed([node, a.pi_op, "load", f], penv))
            add(size, "open", "arbor", timed([a.arbor, "load", f]))
            if a.arbor_before:
                add(size, "open", "before", timed([a.arbor_before, "load", f]))
            add(size, "open", "rs", timed([a.rs, "tree", f], {"RS_MMAP": "1"}))
            for op, pi_args, ar_args in [
                ("context", ["context", f], ["context", f]),
                ("compact", ["compact", f], ["compact", f]),
                ("navRecent", ["navigate", f, recent], ["navigate", f, recent]),
                ("navOldest", ["navigate", f, oldest], ["navigate", f, oldest]),
            ]:
                add(size, op, "pi", timed([node, a.pi_op] + pi_args, penv))
                add(size, op, "arbor", timed([a.arbor] + ar_args))
                if a.arbor_before:
                    add(size, op, "before", timed([a.arbor_before] + ar_args))
            for who, cmd in [("pi", [node, a.pi_op, "append"]), ("arbor", [a.arbor, "append"])]:
                tmp = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False)
                tmp.close()
                shutil.copyfile(f, tmp.name)
                add(size, "append", who, timed(cmd + [tmp.name, "1000"], penv))
                os.unlink(tmp.name)
                lock = tmp.name + ".arbor-lock"
                if os.path.exists(lock):
                    os.unlink(lock)
        print(f"round {rnd}/{a.runs} done in {time.time() - t:.0f} s", file=sys.stderr)

    def op_ms(r, who):
        o = r["out"]
        if who == "rs":
            return o["read_ms"] + o["total_ms"]
        return o.get("ms", r["wall"])

    med = statistics.median
    summary = {}
    lines = ["| size | op | Pi ms | Arbor ms | Pi/Arbor median (min–max of rounds) | Pi RSS MB | Arbor RSS MB |", "|---|---|---|---|---|---|---|"]
    for size in sizes:
        for op in ["open", "context", "compact", "navRecent", "navOldest"]:
            pi = res[(size, op, "pi")]
            ar = res[(size, op, "arbor")]
            ratios = [op_ms(p, "pi") / max(op_ms(q, "arbor"), 1e-3) for p, q in zip(pi, ar)]
            row = {
                "piMs": med([op_ms(p, "pi") for p in pi]),
                "arborMs": med([op_ms(q, "arbor") for q in ar]),
                "ratio": med(ratios),
                "piRss": med([p["rss"] for p in pi]),
                "arborRss": med([q["rss"] for q in ar]),
            }
            if op == "open":
                rs = res[(size, op, "rs")]
                row["rsTreeMs"] = med([op_ms(r, "rs") for r in rs])
                over = [op_ms(q, "arbor") / op_ms(r, "rs") for q, r in zip(ar, rs)]
                row["arborOverRs"] = med(over)
                row["arborOverRsRange"] = [min(over), max(over)]
                row["fileMB"] = os.path.getsize(os.path.join(a.data, f"s{size}.jsonl")) / 1048576
                row["arborRssOverFile"] = row["arborRss"] / row["fileMB"]
            summary[f"{size}/{op}"] = row
            lines.append(f"| {size} | {op} | {row['piMs']:.1f} | {row['arborMs']:.2f} | {row['ratio']:.1f}× ({min(ratios):.1f}–{max(ratios):.1f}) | {row['piRss']:.0f} | {row['arborRss']:.0f} |")
            if a.arbor_before:
                bf = res[(size, op, "before")]
                b_ratios = [op_ms(p, "pi") / max(op_ms(q, "before"), 1e-3) for p, q in zip(pi, bf)]
                b_ratio = med(b_ratios)
                row["beforeMs"] = med([op_ms(q, "before") for q in bf])
                row["beforeRatio"] = b_ratio
                if op == "open":
                    row["beforeOverRs"] = med([op_ms(q, "before") / op_ms(r, "rs") for q, r in zip(bf, rs)])
                lines.append(f"| {size} | {op} (before) | | {row['beforeMs']:.2f} | {b_ratio:.1f}× ({min(b_ratios):.1f}–{max(b_ratios):.1f}) | | {med([q['rss'] for q in bf]):.0f} |")
        for op in ["navRecent", "navOldest"]:
            pi = res[(size, op, "pi")]
            ar = res[(size, op, "arbor")]
            if all("collectMs" in r["out"] for r in pi + ar):
                ratio = med([p["out"]["collectMs"] / max(q["out"]["collectMs"], 1e-3) for p, q in zip(pi, ar)])
                summary[f"{size}/{op}/collect"] = {"piMs": med([p["out"]["collectMs"] for p in pi]), "arborMs": med([q["out"]["collectMs"] for q in ar]), "ratio": ratio}
                c = summary[f"{size}/{op}/collect"]
                lines.append(f"| {size} | {op}: collection only | {c['piMs']:.1f} | {c['arborMs']:.2f} | {ratio:.0f}× | | |")
        pa = res[(size, "append", "pi")]
        aa = res[(size, "append", "arbor")]
        summary[f"{size}/append"] = {
            "piUs": [med([p["out"][k] for p in pa]) for k in ("medianUs", "p99Us", "maxUs")],
            "arborUs": [med([q["out"][k] for q in aa]) for k in ("medianUs", "p99Us", "maxUs")],
        }
        s = summary[f"{size}/append"]
        lines.append(f"| {size} | append p50/p99/max µs | {s['piUs'][0]:.0f}/{s['piUs'][1]:.0f}/{s['piUs'][2]:.0f} | {s['arborUs'][0]:.0f}/{s['arborUs'][1]:.0f}/{s['arborUs'][2]:.0f} | | | |")
    for size in sizes:
        o = summary.get(f"{size}/open")
        if o:
            lines.append(f"\n{size}: open+tree {o['arborMs']:.1f} ms = {o['arborOverRs']:.2f}× ({o['arborOverRsRange'][0]:.2f}–{o['arborOverRsRange'][1]:.2f}) rs-limit tree ({o['rsTreeMs']:.1f} ms); peak RSS {o['arborRss']:.0f} MB = {o['arborRssOverFile']:.2f}× the file ({o['fileMB']:.0f} MB)")
            if "beforeOverRs" in o:
                lines.append(f"{size}: before, open+tree {o['beforeMs']:.1f} ms = {o['beforeOverRs']:.2f}× rs-limit tree")
    if "100k/context" in summary and "10k/context" in summary:
        lin = summary["100k/context"]["arborMs"] / max(summary["10k/context"]["arborMs"], 1e-3)
        lines.append(f"context build 100k/10k = {lin:.1f} (target ≤ 12)")
        summary["contextLinearity"] = lin
    print("\n".join(lines))
    print(json.dumps(summary), file=sys.stderr)


if __name__ == "__main__":
    main()
