//! Times an export of a big session: `cargo run --release -p session-export --example
//! export_bench FILE`. Prints the open time, the export to a sink (HTML and Markdown), and how
//! much of it is parsing the entry lines alone.
use session_engine::Session;
use session_export::{export, Format, Scope};
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: export_bench FILE");
    let t = Instant::now();
    let session = Session::open(std::path::Path::new(&path)).expect("open");
    let open_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let mut n = 0usize;
    for i in 0..session.len() {
        n += pi_json::parse_bytes(session.raw(i)).map(|_| 1).unwrap_or(0);
    }
    let parse_ms = t.elapsed().as_secs_f64() * 1e3;
    let mut times = Vec::new();
    for format in [Format::Html, Format::Markdown] {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, std::io::sink());
        let t = Instant::now();
        export(&session, Scope::Session { leaf: session.file_leaf() }, format, "bench", &mut w, &mut |_, _| {})
            .unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    println!(
        "{{\"entries\":{},\"parsed\":{n},\"open_ms\":{open_ms:.1},\"parse_all_lines_ms\":{parse_ms:.1},\"export_html_to_sink_ms\":{:.1},\"export_md_to_sink_ms\":{:.1}}}",
        session.len(),
        times[0],
        times[1]
    );
}
