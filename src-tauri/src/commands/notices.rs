//! OS notifications of summaries written by others (what to say is `state::notices`): the
//! setting, the UI's subscription to clicks, and the desktop's notification service.
//!
//! Why not `tauri-plugin-notification`: on desktop it hands the notification to `notify-rust` and
//! drops the handle, so a click is never reported (its `onAction` is mobile-only). On Linux Arbor
//! talks to the freedesktop notification service itself, over the session bus with the `zbus`
//! the single-instance plugin already builds (`notify-rust` does the same over the same crate,
//! but would have pulled other features of it into the build): `Notify` with a `default` action
//! (a click on the body), and one thread that waits for `ActionInvoked` and `NotificationClosed`
//! signals, as `notify-rust`'s `wait_for_action` does. A click brings the window to the front and
//! tells the UI, which opens the summary workbench on the entry; Arbor then closes the
//! notification, as not every service removes it itself. Elsewhere notices are not shown.

use crate::error::{AppError, IpcResult};
use crate::state::app::AppState;
use crate::state::lock;
use crate::state::notices::{Notice, NoticeSink};
use crate::state::state_file::ArborStateFile;
use crate::view::notices::{NoticeClick, NoticeSettings};
use std::sync::{Arc, Mutex};
use tauri::ipc::Channel;
use tauri::State;

/// Where clicks go once the UI subscribed; `false` means the receiver is gone.
pub type ClickSink = Arc<dyn Fn(NoticeClick) -> bool + Send + Sync>;

/// Managed by the app: the UI's channel for clicks, and why the last notification failed.
#[derive(Default)]
pub struct NoticeClicks {
    sink: Mutex<Option<ClickSink>>,
    /// A click that came before the UI subscribed (after a reload of the page, say).
    pending: Mutex<Option<NoticeClick>>,
    problem: Mutex<Option<String>>,
}

impl NoticeClicks {
    pub fn subscribe(&self, sink: ClickSink) {
        *lock(&self.sink) = Some(sink.clone());
        if let Some(c) = lock(&self.pending).take() {
            sink(c);
        }
    }

    pub fn clicked(&self, c: NoticeClick) {
        let sink = lock(&self.sink).clone();
        if !sink.is_some_and(|s| s(c.clone())) {
            *lock(&self.pending) = Some(c);
        }
    }

    fn failed(&self, why: String) {
        *lock(&self.problem) = Some(why);
    }
}

pub fn settings(state: &AppState, clicks: &NoticeClicks) -> NoticeSettings {
    NoticeSettings {
        enabled: crate::state::notices::enabled(&state.state_file()),
        problem: lock(&clicks.problem).clone(),
    }
}

/// Turns the notices on or off (Arbor's state file).
pub fn set_enabled(state: &AppState, clicks: &NoticeClicks, enabled: bool) -> Result<NoticeSettings, AppError> {
    let mut st = ArborStateFile::load(&state.state_file());
    st.summary_notices_off = !enabled;
    st.save(&state.state_file())?;
    Ok(settings(state, clicks))
}

/// Installs the desktop's notification service as the app's notice sink.
pub fn setup(app: &tauri::App) {
    use tauri::Manager;
    app.manage(NoticeClicks::default());
    let sink = Arc::new(Desktop { app: app.handle().clone(), bus: Default::default() });
    app.state::<AppState>().notices.set_sink(sink);
}

/// The desktop's notification service; connected at the first notice.
struct Desktop {
    app: tauri::AppHandle,
    #[cfg(target_os = "linux")]
    bus: Arc<std::sync::OnceLock<Result<dbus::Bus, String>>>,
    #[cfg(not(target_os = "linux"))]
    bus: (),
}

impl Desktop {
    /// A click: the window comes to the front and the UI opens the workbench on the entry.
    fn on_click(app: &tauri::AppHandle, n: &Notice) {
        use tauri::Manager;
        if let Some(w) = app.get_webview_window("main") {
            let _ = w.unminimize();
            let _ = w.show();
            let _ = w.set_focus();
        }
        app.state::<NoticeClicks>()
            .clicked(NoticeClick { session_path: n.session_path.display().to_string(), entry_id: n.entry_id.clone() });
    }
}

impl NoticeSink for Desktop {
    #[cfg(target_os = "linux")]
    fn show(&self, notice: Notice) {
        use tauri::Manager;
        // On a thread of its own: the bus may take a while to start a notification service, and
        // the caller is the library's event thread.
        let (app, bus) = (self.app.clone(), self.bus.clone());
        let _ = std::thread::Builder::new().name("arbor-notify".into()).spawn(move || {
            let bus = bus.get_or_init(|| {
                let app = app.clone();
                dbus::Bus::connect(Arc::new(move |n: Notice| Desktop::on_click(&app, &n)))
                    .map_err(|e| format!("no session bus for notifications ({e})"))
            });
            let r = match bus {
                Ok(b) => b.show(notice).map_err(|e| format!("the notification service refused a notification ({e})")),
                Err(e) => Err(e.clone()),
            };
            if let Err(why) = r {
                eprintln!("arbor: {why}");
                app.state::<NoticeClicks>().failed(why);
            }
        });
    }

    #[cfg(not(target_os = "linux"))]
    fn show(&self, _notice: Notice) {
        use tauri::Manager;
        let _ = &self.bus;
        self.app.state::<NoticeClicks>().failed("notifications are shown on Linux only for now".into());
    }
}

#[cfg(target_os = "linux")]
mod dbus {
    use crate::state::lock;
    use crate::state::notices::Notice;
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    use zbus::zvariant::Value;

    const DEST: &str = "org.freedesktop.Notifications";
    const PATH: &str = "/org/freedesktop/Notifications";
    const IFACE: &str = "org.freedesktop.Notifications";

    /// The session bus, and the notifications shown and not yet closed, by the service's id.
    pub struct Bus {
        conn: zbus::blocking::Connection,
        shown: Arc<Mutex<HashMap<u32, Notice>>>,
    }

    impl Bus {
        /// Connects to the session bus and starts the thread that answers the service's
        /// signals: a `default` action on a notice of Arbor's is a click.
        pub fn connect(on_click: Arc<dyn Fn(Notice) + Send + Sync>) -> zbus::Result<Bus> {
            Bus::on(zbus::blocking::Connection::session()?, on_click)
        }

        /// [`Bus::connect`] on a given connection (the tests' private bus).
        fn on(conn: zbus::blocking::Connection, on_click: Arc<dyn Fn(Notice) + Send + Sync>) -> zbus::Result<Bus> {
            let rule =
                zbus::MatchRule::builder().msg_type(zbus::message::Type::Signal).interface(IFACE)?.path(PATH)?.build();
            let signals = zbus::blocking::MessageIterator::for_match_rule(rule, &conn, Some(64))?;
            let shown: Arc<Mutex<HashMap<u32, Notice>>> = Default::default();
            let seen = shown.clone();
            let service = conn.clone();
            std::thread::Builder::new()
                .name("arbor-notice-clicks".into())
                .spawn(move || {
                    for msg in signals.flatten() {
                        let member = msg.header().member().map(|m| m.to_string());
                        match member.as_deref() {
                            Some("ActionInvoked") => {
                                let Ok((id, key)) = msg.body().deserialize::<(u32, String)>() else { continue };
                                let n = if key == "default" { lock(&seen).remove(&id) } else { None };
                                if let Some(n) = n {
                                    on_click(n);
                                    // Handled: the window shows the entry now. The spec has the
                                    // service remove a notification whose action was invoked,
                                    // but not every service does (dunst keeps it when the action
                                    // comes from `dunstctl action`), and a stale one left on
                                    // screen would only open the same workbench again. An error
                                    // means it is gone already.
                                    let _ =
                                        service.call_method(Some(DEST), PATH, Some(IFACE), "CloseNotification", &(id,));
                                }
                            }
                            Some("NotificationClosed") => {
                                if let Ok((id, _reason)) = msg.body().deserialize::<(u32, u32)>() {
                                    lock(&seen).remove(&id);
                                }
                            }
                            _ => {}
                        }
                    }
                })
                .map_err(|e| zbus::Error::Failure(e.to_string()))?;
            Ok(Bus { conn, shown })
        }

        /// `Notify` (the freedesktop Desktop Notifications spec): app name, no replaced id, no
        /// icon, summary, body, the `default` action, hints, the service's default timeout.
        pub fn show(&self, n: Notice) -> zbus::Result<()> {
            let hints: HashMap<&str, Value> = HashMap::from([
                ("desktop-entry", Value::from("arbor")),
                ("category", Value::from("transfer.complete")),
            ]);
            let actions = vec!["default", "Review in Arbor"];
            let args = ("Arbor", 0u32, "", n.title.as_str(), n.body.as_str(), actions, hints, -1i32);
            let reply = self.conn.call_method(Some(DEST), PATH, Some(IFACE), "Notify", &args)?;
            let id: u32 = reply.body().deserialize()?;
            lock(&self.shown).insert(id, n);
            Ok(())
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::state::notices::NoticeKind;
        use std::io::{BufRead, BufReader};
        use std::process::{Child, Command, Stdio};
        use std::sync::mpsc;
        use std::time::Duration;
        use zbus::blocking::connection::Builder;
        use zbus::blocking::{Connection, MessageIterator};

        /// A private bus, so that no desktop's notification service takes part.
        struct Daemon(Child);

        impl Drop for Daemon {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }

        /// `dbus-daemon` comes with the keyring tests' packages (scripts/setup.sh): without it
        /// this test fails rather than pass untested.
        fn private_bus() -> (Daemon, String) {
            let mut child = Command::new("dbus-daemon")
                .args(["--session", "--nofork", "--print-address=1"])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap_or_else(|e| panic!("no dbus-daemon ({e}): run scripts/setup.sh, which installs it"));
            let mut address = String::new();
            BufReader::new(child.stdout.take().unwrap()).read_line(&mut address).unwrap();
            (Daemon(child), address.trim().to_string())
        }

        /// The notification service: answers `Notify` with ids from 7 up, and reports the ids
        /// it is asked to close.
        fn service(address: &str) -> (Connection, mpsc::Receiver<u32>) {
            let conn = Builder::address(address).unwrap().build().unwrap();
            conn.request_name(DEST).unwrap();
            let calls = MessageIterator::from(&conn);
            let (closed, closes) = mpsc::channel();
            let c = conn.clone();
            std::thread::spawn(move || {
                let mut next = 7u32;
                for msg in calls.flatten() {
                    let h = msg.header();
                    if h.message_type() != zbus::message::Type::MethodCall {
                        continue;
                    }
                    match h.member().map(|m| m.as_str()) {
                        Some("Notify") => {
                            let _ = c.reply(&h, &next);
                            next += 1;
                        }
                        Some("CloseNotification") => {
                            if let Ok(id) = msg.body().deserialize::<u32>() {
                                let _ = closed.send(id);
                            }
                            let _ = c.reply(&h, &());
                        }
                        _ => {}
                    }
                }
            });
            (conn, closes)
        }

        fn notice(entry: &str) -> Notice {
            Notice {
                title: "parser: compacted".into(),
                body: format!("Compaction {entry}: no drop alarm, no facts to retain. Click to review it."),
                kind: NoticeKind::Compaction,
                session_path: "/tmp/sessions/parser.jsonl".into(),
                entry_id: entry.into(),
            }
        }

        #[test]
        fn a_click_opens_the_notice_s_entry_once_and_closes_the_notification() {
            let (_daemon, address) = private_bus();
            let (service, closes) = service(&address);
            let app = Builder::address(address.as_str()).unwrap().build().unwrap();
            let me = app.unique_name().unwrap().to_string();
            let (clicked, clicks) = mpsc::channel();
            let bus = Bus::on(
                app,
                Arc::new(move |n: Notice| {
                    let _ = clicked.send(n);
                }),
            )
            .unwrap();
            let signal = |member: &str, body: &(u32, &str)| {
                service.emit_signal(Some(me.as_str()), PATH, IFACE, member, body).unwrap();
            };
            let quiet = Duration::from_millis(300);
            let wait = Duration::from_secs(5);

            // The service numbers it 7.
            bus.show(notice("c1")).unwrap();
            // Another action of it, or the default action of a notification not Arbor's: no click.
            signal("ActionInvoked", &(7, "snooze"));
            signal("ActionInvoked", &(99, "default"));
            assert!(clicks.recv_timeout(quiet).is_err());
            assert!(closes.try_recv().is_err());

            // The click: the entry to open, and the service asked to remove the notification.
            signal("ActionInvoked", &(7, "default"));
            assert_eq!(clicks.recv_timeout(wait).expect("the click"), notice("c1"));
            assert_eq!(closes.recv_timeout(wait).expect("the close"), 7);
            // Once: a second invocation (a service that sends it again) opens nothing.
            signal("ActionInvoked", &(7, "default"));
            assert!(clicks.recv_timeout(quiet).is_err());

            // A notification the service closed (timeout, dismissed) is forgotten.
            bus.show(notice("c2")).unwrap(); // 8
            service.emit_signal(Some(me.as_str()), PATH, IFACE, "NotificationClosed", &(8u32, 1u32)).unwrap();
            signal("ActionInvoked", &(8, "default"));
            assert!(clicks.recv_timeout(quiet).is_err());
            assert!(closes.try_recv().is_err());
        }
    }
}

// ---- commands -----------------------------------------------------------------------------

/// Whether summaries written by others are notified, and why the last notification failed.
#[tauri::command]
#[specta::specta]
pub fn notice_settings(state: State<'_, AppState>, clicks: State<'_, NoticeClicks>) -> IpcResult<NoticeSettings> {
    Ok(settings(&state, &clicks))
}

/// "Notify me when Pi compacts or summarizes a branch": on or off.
#[tauri::command]
#[specta::specta]
pub fn set_notices_enabled(
    state: State<'_, AppState>,
    clicks: State<'_, NoticeClicks>,
    enabled: bool,
) -> IpcResult<NoticeSettings> {
    Ok(set_enabled(&state, &clicks, enabled)?)
}

/// The UI's subscription to clicks on notifications.
#[tauri::command]
#[specta::specta]
pub fn notices_subscribe(clicks: State<'_, NoticeClicks>, on_click: Channel<NoticeClick>) -> IpcResult<()> {
    clicks.subscribe(Arc::new(move |c| on_click.send(c).is_ok()));
    Ok(())
}
