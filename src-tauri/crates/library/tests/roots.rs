//! Pi's session roots (own test binary: it sets process environment variables).
use library::roots::{pi_roots, scan};

#[test]
fn roots_come_from_the_agent_dir_and_pis_settings() {
    let d = tempfile::tempdir().unwrap();
    let agent = d.path().join("agent");
    let custom = d.path().join("custom-sessions");
    std::fs::create_dir_all(agent.join("sessions/--home-u-proj--")).unwrap();
    std::fs::create_dir_all(&custom).unwrap();
    std::fs::write(
        agent.join("settings.json"),
        format!("{{\"sessionDir\":{:?},\"other\":1}}", custom.to_str().unwrap()),
    )
    .unwrap();
    std::env::set_var("PI_CODING_AGENT_DIR", &agent);
    std::env::remove_var("PI_CODING_AGENT_SESSION_DIR");
    assert_eq!(pi_roots(), vec![agent.join("sessions"), custom.clone()]);
    // the same folder twice is listed once
    std::env::set_var("PI_CODING_AGENT_SESSION_DIR", &custom);
    assert_eq!(pi_roots(), vec![agent.join("sessions"), custom.clone()]);
    std::env::remove_var("PI_CODING_AGENT_SESSION_DIR");
    // read as JSON.parse reads it: a lone surrogate elsewhere in the file (which serde_json
    // refuses) does not hide the folder; a file that does not parse gives no sessionDir
    std::fs::write(
        agent.join("settings.json"),
        format!("{{\"note\":\"\\ud800\",\"sessionDir\":{:?}}}", custom.to_str().unwrap()),
    )
    .unwrap();
    assert_eq!(pi_roots(), vec![agent.join("sessions"), custom.clone()]);
    std::fs::write(agent.join("settings.json"), format!("{{\"sessionDir\":{:?},}}", custom.to_str().unwrap())).unwrap();
    assert_eq!(pi_roots(), vec![agent.join("sessions")]);
    std::fs::write(
        agent.join("settings.json"),
        format!("{{\"sessionDir\":{:?},\"other\":1}}", custom.to_str().unwrap()),
    )
    .unwrap();

    // scanning: nested *.jsonl files, not folders named *.jsonl, not other files
    std::fs::write(agent.join("sessions/--home-u-proj--/a.jsonl"), b"").unwrap();
    std::fs::write(agent.join("sessions/--home-u-proj--/notes.txt"), b"").unwrap();
    std::fs::create_dir_all(agent.join("sessions/dir.jsonl")).unwrap();
    std::fs::write(custom.join("b.jsonl"), b"").unwrap();
    assert_eq!(scan(&agent.join("sessions")), vec![agent.join("sessions/--home-u-proj--/a.jsonl")]);
    assert_eq!(scan(&custom), vec![custom.join("b.jsonl")]);

    // the library adds the user's folders after Pi's
    let extra = d.path().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let mut lib = library::Library::open(&d.path().join("i.sqlite3")).unwrap();
    lib.add_user_root(&extra).unwrap();
    let all = lib.all_roots().unwrap();
    assert_eq!(all, vec![agent.join("sessions"), custom.clone(), extra.canonicalize().unwrap()]);
    assert!(lib.add_user_root(&d.path().join("missing")).is_err());
    lib.remove_user_root(&extra.canonicalize().unwrap()).unwrap();
    assert_eq!(lib.user_roots().unwrap(), Vec::<std::path::PathBuf>::new());
}
