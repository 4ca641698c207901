//! Times an export of a big session: `cargo run --release -p session-export --example
//! export_bench FILE`. Prints the open time, how much of an export is parsing the entry lines
//! alone, the search for secrets over every entry (`find_secrets`, what the export dialog lists,
//! and `secrets::find` on every line's text with no prefilter), and the export to a sink (HTML and
//! Markdown), secrets redacted (the default) and kept.
use session_engine::Session;
use session_export::{export_with, find_secrets, Format, Options, Scope};
use std::time::Instant;

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: export_bench FILE");
    let t = Instant::now();
    let session = Session::open(std::path::Path::new(&path)).expect("open");
    let open_ms = ms(t);
    let t = Instant::now();
    let mut n = 0usize;
    for i in 0..session.len() {
        n += pi_json::parse_bytes(&session.raw(i)).map(|_| 1).unwrap_or(0);
    }
    let parse_ms = ms(t);
    // Every line's bytes through the rules, whatever they hold: the cost of `find` alone.
    let t = Instant::now();
    let mut raw_found = 0usize;
    for i in 0..session.len() {
        raw_found += secrets::find(&String::from_utf8_lossy(&session.raw(i))).len();
    }
    let find_all_ms = ms(t);
    let t = Instant::now();
    let with_keyword = (0..session.len()).filter(|&i| secrets::might_contain_json(&session.raw(i))).count();
    let prefilter_ms = ms(t);
    let leaf = session.file_leaf();
    let t = Instant::now();
    let found = find_secrets(&session, Scope::Session { leaf });
    let find_secrets_ms = ms(t);
    let mut times = Vec::new();
    for keep_secrets in [false, true] {
        for format in [Format::Html, Format::Markdown] {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, std::io::sink());
            let t = Instant::now();
            let opts = Options { keep_secrets };
            export_with(&session, Scope::Session { leaf }, format, opts, "bench", &mut w, &mut |_, _| {}).unwrap();
            times.push(ms(t));
        }
    }
    println!(
        "{{\"entries\":{},\"parsed\":{n},\"open_ms\":{open_ms:.1},\"parse_all_lines_ms\":{parse_ms:.1},\
\"secrets_find_every_raw_line_ms\":{find_all_ms:.1},\"secrets_in_raw_lines\":{raw_found},\
\"prefilter_all_lines_ms\":{prefilter_ms:.1},\"lines_with_a_keyword\":{with_keyword},\
\"find_secrets_ms\":{find_secrets_ms:.1},\"secrets_found\":{},\
\"export_html_redacted_ms\":{:.1},\"export_md_redacted_ms\":{:.1},\"export_html_kept_ms\":{:.1},\"export_md_kept_ms\":{:.1}}}",
        session.len(),
        found.len(),
        times[0],
        times[1],
        times[2],
        times[3]
    );
}
