//! The rule set against the shared corpus: every planted secret is found, with its kind and its
//! exact span, and redacted; no look-alike is touched; redaction is idempotent.
use secrets::corpus::{look_alikes, planted_secrets};

#[test]
fn every_planted_secret_is_found_with_its_kind_and_span() {
    for p in planted_secrets() {
        let found = secrets::find(&p.line);
        let at = p.line.find(&p.secret).unwrap();
        assert_eq!(found.len(), 1, "{}: {:?} in {:?}", p.kind, found, p.line);
        let f = found[0];
        assert_eq!(f.kind, p.kind, "{:?}", p.line);
        assert_eq!((f.start, f.end), (at, at + p.secret.len()), "{}: {:?}", p.kind, &p.line[f.start..f.end]);
        let (red, _) = secrets::redact(&p.line);
        assert!(!red.contains(&p.secret), "{red}");
        assert!(red.contains(&format!("[redacted: {}]", p.kind)), "{red}");
    }
}

#[test]
fn look_alikes_stay() {
    for t in look_alikes() {
        let found = secrets::find(&t);
        assert!(
            found.is_empty(),
            "{:?} in {:?}",
            found.iter().map(|f| (f.kind, &t[f.start..f.end])).collect::<Vec<_>>(),
            t
        );
        assert_eq!(secrets::redact(&t).0, t);
    }
}

#[test]
fn all_planted_in_one_text_and_redaction_is_idempotent() {
    let planted = planted_secrets();
    let mut text = String::new();
    for (p, l) in planted.iter().zip(look_alikes().iter().cycle()) {
        text.push_str("é ");
        text.push_str(&p.line);
        text.push_str("\n日本 ");
        text.push_str(l);
        text.push('\n');
    }
    let (red, found) = secrets::redact(&text);
    assert_eq!(found.len(), planted.len(), "{:?}", found.iter().map(|f| f.kind).collect::<Vec<_>>());
    for (p, f) in planted.iter().zip(&found) {
        assert_eq!(f.kind, p.kind);
        assert_eq!(&text[f.start..f.end], p.secret);
        assert!(!red.contains(&p.secret));
    }
    for l in look_alikes().iter().take(planted.len()) {
        assert!(red.contains(l.as_str()), "a look-alike was changed: {l:?}");
    }
    assert!(secrets::find(&red).is_empty(), "{:?}", secrets::find(&red));
    assert!(secrets::might_contain(text.as_bytes()));
    assert!(!secrets::might_contain(b"plain words, nothing to see"));
}

#[test]
fn a_private_key_cut_before_its_end_line_is_still_redacted() {
    let p = planted_secrets().into_iter().find(|p| p.kind == "private-key").unwrap();
    let cut = &p.secret[..p.secret.len() / 2];
    let text = format!("output truncated:\n{cut}");
    let found = secrets::find(&text);
    assert_eq!(found.len(), 1);
    assert_eq!(&text[found[0].start..found[0].end], cut.trim_end());
    // As a JSON string value printed by a tool (a service-account file): `\n` written out.
    let json = format!("{{\"private_key\": \"{}\\n\"}}", p.secret.replace('\n', "\\n"));
    let found = secrets::find(&json);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, "private-key");
    assert!(json[found[0].start..found[0].end].ends_with("-----END OPENSSH PRIVATE KEY-----"));
}

#[test]
fn a_key_at_a_multibyte_boundary_keeps_the_text_valid() {
    let line = format!("PASSWORD={}é€😀", "Zq8xL2vR9mK4tW7pN3sY");
    let (red, found) = secrets::redact(&line);
    assert_eq!(found.len(), 1);
    assert!(red.starts_with("PASSWORD=[redacted: secret-assignment]"), "{red}");
}

#[test]
fn json_lines_with_unicode_escapes_are_never_skipped() {
    assert!(secrets::might_contain_json(br#"{"text":"\u0041KIA..."}"#));
    assert!(!secrets::might_contain_json(br#"{"text":"hello"}"#));
}

#[test]
fn every_rule_is_listed_with_its_source() {
    let rules = secrets::rules();
    for p in planted_secrets() {
        assert!(rules.iter().any(|r| r.id == p.kind), "{} is not a rule", p.kind);
    }
    assert!(rules.iter().any(|r| r.source == "gitleaks") && rules.iter().any(|r| r.source == "arbor"));
}
