//! Times the rules over a session's lines: `cargo run --release -p secrets --example rules_bench
//! FILE.jsonl`. Prints the keyword pass and each rule's regex over every line (no prefilter), then
//! `find` over every line, so a slow rule shows before it slows exports down.
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: rules_bench FILE.jsonl");
    let bytes = std::fs::read(&path).expect("read");
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    for (rule, ms) in secrets::time_rules(&lines) {
        println!("{ms:9.1} ms  {rule}");
    }
    let t = Instant::now();
    let mut n = 0;
    for l in &lines {
        n += secrets::find(&String::from_utf8_lossy(l)).len();
    }
    println!("{:9.1} ms  find on every line ({n} findings)", t.elapsed().as_secs_f64() * 1e3);
}
