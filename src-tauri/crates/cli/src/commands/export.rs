//! `arbor-cli export FILE --format markdown|html [--leaf ID] [--context] [--out PATH] [--force]`:
//! the whole session (the path to the leaf first, then every branch), the branch to `--leaf`, or
//! with `--context` what the model sees at the leaf, as Markdown or as one self-contained HTML
//! file (`session_engine::export`: no script, no external request, content escaped).
//!
//! The export streams through a buffered writer into a temporary file beside PATH, which then
//! takes PATH's name (refused when PATH exists, unless `--force`; never the session file
//! itself). Without `--out` it goes to stdout. Big files report progress on stderr.
use super::CmdResult;
use session_engine::export::{export, Format, Scope};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// `arbor-cli export` arguments.
#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// Session file (.jsonl); it is only read
    pub file: PathBuf,
    /// markdown | html
    #[arg(long)]
    pub format: String,
    /// Export the branch from the root to this entry (with --context: the context at it)
    #[arg(long)]
    pub leaf: Option<String>,
    /// Export only what the model sees at the leaf (or --leaf)
    #[arg(long)]
    pub context: bool,
    /// Write here instead of stdout (refused when it exists, unless --force)
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an existing --out file (never the session file)
    #[arg(long)]
    pub force: bool,
}

/// Files above this size report progress on stderr.
const PROGRESS_MIN_BYTES: u64 = 16 << 20;

fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

pub fn run(args: ExportArgs) -> CmdResult {
    let format = match args.format.as_str() {
        "markdown" | "md" => Format::Markdown,
        "html" => Format::Html,
        other => return Err(format!("unknown format {other:?}; use --format markdown or --format html")),
    };
    if let Some(out) = &args.out {
        if same_file(out, &args.file) {
            return Err(format!("{} is the session file itself; nothing was written. Pick another --out path.", out.display()));
        }
        if out.exists() && !args.force {
            return Err(format!("{} already exists; nothing was written. Pick another --out path, or pass --force to replace it.", out.display()));
        }
        if out.is_dir() {
            return Err(format!("{} is a folder; nothing was written. Give --out a file name.", out.display()));
        }
    }
    let s = super::open_session(&args.file)?;
    let leaf = super::leaf_arg(&s, args.leaf.as_deref())?;
    let scope = match (args.context, &args.leaf) {
        (true, _) => Scope::Context { leaf },
        (false, Some(_)) => Scope::Branch { leaf },
        (false, None) => Scope::Session { leaf },
    };
    let file_name = args.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let title = match s.name() {
        Some(n) => format!("{n} ({file_name})"),
        None => file_name,
    };
    let big = s.file_len() >= PROGRESS_MIN_BYTES;
    let mut last_pct = u64::MAX;
    let mut progress = |done: u64, total: u64| {
        if !big || total == 0 {
            return;
        }
        let pct = done * 100 / total;
        if pct / 5 != last_pct / 5 || last_pct == u64::MAX {
            last_pct = pct;
            eprintln!("arbor-cli: exporting {}: {pct}%", args.file.display());
        }
    };
    let io_err = |what: &Path, e: std::io::Error| format!("cannot write {}: {e}; nothing was written there", what.display());
    match &args.out {
        None => {
            let stdout = std::io::stdout();
            let mut w = BufWriter::with_capacity(1 << 20, stdout.lock());
            export(&s, scope, format, &title, &mut w, &mut progress).and_then(|_| w.flush()).map_err(|e| format!("cannot write the export to stdout: {e}"))?;
        }
        Some(out) => {
            let dir = match out.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let base = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "export".into());
            let tmp = dir.join(format!(".{base}.arbor-tmp-{}", std::process::id()));
            let res = (|| -> Result<(), String> {
                let f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp).map_err(|e| io_err(out, e))?;
                let mut w = BufWriter::with_capacity(1 << 20, f);
                export(&s, scope, format, &title, &mut w, &mut progress).map_err(|e| io_err(out, e))?;
                let f = w.into_inner().map_err(|e| io_err(out, e.into_error()))?;
                f.sync_all().map_err(|e| io_err(out, e))?;
                if args.force {
                    if same_file(out, &args.file) {
                        return Err(format!("{} is the session file itself; nothing was written.", out.display()));
                    }
                    std::fs::rename(&tmp, out).map_err(|e| io_err(out, e))?;
                } else {
                    // A link never replaces a file that appeared meanwhile.
                    std::fs::hard_link(&tmp, out).map_err(|e| {
                        if e.kind() == std::io::ErrorKind::AlreadyExists {
                            format!("{} appeared while exporting; nothing was written. Pass --force to replace it.", out.display())
                        } else {
                            io_err(out, e)
                        }
                    })?;
                    let _ = std::fs::remove_file(&tmp);
                }
                Ok(())
            })();
            if res.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            res?;
            if big {
                eprintln!("arbor-cli: wrote {}", out.display());
            }
        }
    }
    Ok(())
}
