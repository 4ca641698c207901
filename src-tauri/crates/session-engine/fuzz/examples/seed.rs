//! Writes the seed corpora into `seeds/<target>/` from the engine's fixtures: session files
//! (small ones whole, large ones as their first lines), the same with a split point for the
//! extend target, every compaction and branch summary text for the summary target (with the
//! summary texts of summary-analysis's `tests/fixtures/summaries`), and a few settings files.
//! Run once when the fixtures change:
//! `cargo +nightly run --release --example seed -- ../tests/fixtures seeds` from this folder.

use session_engine::Session;
use std::path::Path;

/// The fuzz runs use -max_len=4096: larger seeds would only be cut.
const MAX: usize = 4096;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let fixtures = Path::new(&args[1]);
    let out = Path::new(&args[2]);
    for t in ["loader", "extend", "summary", "settings"] {
        std::fs::create_dir_all(out.join(t)).unwrap();
    }
    let mut names: Vec<_> = ["conformance", "random"]
        .iter()
        .flat_map(|sub| std::fs::read_dir(fixtures.join(sub)).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    names.sort();
    let (mut files, mut sums) = (0, 0);
    for p in names {
        let bytes = std::fs::read(&p).unwrap();
        let stem = p.file_stem().unwrap().to_string_lossy().to_string();
        // Whole lines up to MAX bytes.
        let mut end = bytes.len().min(MAX);
        if end < bytes.len() {
            end = bytes[..end].iter().rposition(|&b| b == b'\n').map(|i| i + 1).unwrap_or(end);
        }
        let head = &bytes[..end];
        std::fs::write(out.join("loader").join(&stem), head).unwrap();
        let nl: Vec<usize> = head.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i + 1).collect();
        let cut = nl.get(nl.len() / 2).copied().unwrap_or(0) as u16;
        // An odd first byte snaps the cut to a line end (see fuzz_targets/extend.rs).
        let mut e = vec![(cut as u8) | 1, (cut >> 8) as u8];
        e.extend_from_slice(head);
        std::fs::write(out.join("extend").join(&stem), e).unwrap();
        files += 1;
        let session = Session::from_bytes(bytes);
        for i in 0..session.len() {
            if summary_analysis::is_summary(&session, i) {
                let t = summary_analysis::summary_text(&session, i);
                if !t.is_empty() {
                    let mut end = t.len().min(MAX);
                    while !t.is_char_boundary(end) {
                        end -= 1;
                    }
                    std::fs::write(out.join("summary").join(format!("{stem}-{}", session.id(i))), &t[..end]).unwrap();
                    sums += 1;
                }
            }
        }
    }
    let summaries = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../summary-analysis/tests/fixtures/summaries");
    for e in std::fs::read_dir(summaries).unwrap() {
        let p = e.unwrap().path();
        let t = std::fs::read_to_string(&p).unwrap();
        let mut end = t.len().min(MAX);
        while !t.is_char_boundary(end) {
            end -= 1;
        }
        std::fs::write(out.join("summary").join(p.file_name().unwrap()), &t[..end]).unwrap();
        sums += 1;
    }
    let settings: [&[u8]; 5] = [
        b"{\"compaction\":{\"enabled\":false,\"reserveTokens\":1000,\"keepRecentTokens\":5000}}",
        b"{\"theme\":\"dark\",\"sessionDir\":\"/tmp/s\",\"branchSummary\":{\"reserveTokens\":2048}}\xff{\"compaction\":{\"reserveTokens\":99}}",
        b"{\n  \"defaultProvider\": \"anthropic\",\n  \"compaction\": {\n    \"keepRecentTokens\": 1e3\n  }\n}\n",
        b"[1,2]\xff{\"compaction\":true}",
        b"  \xff{\"a\":{\"b\":{\"c\":[null,-0,1.5e-7,\"\\ud800\"]}}}",
    ];
    for (i, b) in settings.iter().enumerate() {
        std::fs::write(out.join("settings").join(format!("s{i}")), b).unwrap();
    }
    println!("{files} session files, {sums} summary texts, {} settings files", settings.len());
}
