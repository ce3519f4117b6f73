//! The settings played through the host: `configure` writes keys only to session storage and
//! the settings view masks them; a storage read error is the answer word for word.

use serde_json::json;

use super::*;
use crate::core::host::listing::{Listing, Settle};
use crate::core::host::play::Play;
use crate::core::setup::store::{key_slot, SITES_KEY};

const ORIGIN: &str = "chrome-extension://abc";

fn configure(play: &mut Play, request: &Value) -> Result<Value, String> {
    let mut configure = Configure::new(request);
    play.drive(|host, input, now| host.configure(&mut configure, input, now))
}

fn settings(play: &mut Play) -> Result<Value, String> {
    let mut view = SettingsView::new(ORIGIN);
    play.drive(|host, input, now| host.settings(&mut view, input, now))
}

#[test]
fn configure_writes_keys_only_to_session_storage() {
    let mut play = Play::shop(&[]);
    let request = json!({
        "models": [{"name": "m", "provider": "openai", "baseUrl": "https://api.test/v1", "model": "x", "keyRef": "openai"}],
        "default": "m",
        "sites": [{"origin": "https://shop.test", "alwaysConfirm": true}],
        "keys": {"openai": "sk-secret-1"},
    });
    let stored = configure(&mut play, &request).unwrap();
    assert_eq!(stored["default"], "m");
    assert!(!stored.to_string().contains("sk-secret-1"));
    assert_eq!(play.session[&key_slot("openai")], json!("sk-secret-1"));
    let local = serde_json::to_string(&play.local).unwrap();
    assert!(local.contains(REGISTRY_KEY) && local.contains(SITES_KEY));
    assert!(
        !local.contains("sk-secret-1"),
        "no key in local storage: {local}"
    );

    let view = settings(&mut play).unwrap();
    assert!(
        !view.to_string().contains("sk-secret-1"),
        "only the key's mask: {view}"
    );
    assert_eq!(view["default"], "m");
    assert_eq!(view["keys"][0]["ref"], "openai");
}

#[test]
fn configure_forgets_the_kept_listings() {
    let mut play = Play::shop(&[]);
    play.list(Listing::kept(4, Settle::Now)).unwrap();
    assert!(play.host.listings.borrow().get(4, play.now).is_some());
    let refused = configure(&mut play, &json!({"sites": "no"}));
    assert!(refused.unwrap_err().starts_with("configure: `sites`: "));
    assert!(play.host.listings.borrow().get(4, play.now).is_none());
}

#[test]
fn a_storage_read_error_is_the_answer_word_for_word() {
    let mut play = Play::shop(&[]);
    play.storage_error = Some("Error: storage is gone".into());
    assert_eq!(settings(&mut play), Err("Error: storage is gone".into()));
    assert_eq!(
        configure(&mut play, &json!({"default": "m"})),
        Err("Error: storage is gone".into())
    );
}

#[test]
fn a_failed_write_ends_configure_with_its_failure() {
    let play = Play::shop(&[]);
    let request = json!({
        "models": [{"name": "m", "provider": "openai", "baseUrl": "https://api.test/v1", "model": "x"}],
        "keys": {"openai": "sk-1"},
    });
    // The reads pass; every write fails.
    let mut configure = Configure::new(&request);
    let mut input = None;
    let failed = loop {
        match play.host.configure(&mut configure, input.take(), 0.0) {
            Step::Done(done) => break done,
            Step::Do(Output::Storage(Storage::Read { .. })) => input = Some(Input::Read(Ok(None))),
            Step::Do(Output::Storage(Storage::Write { area, .. })) => {
                assert_eq!(area, Local, "the registry is written first");
                input = Some(Input::Done(Err("QUOTA_BYTES quota exceeded".into())));
            }
            Step::Do(other) => panic!("configure asked for {other:?}"),
        }
    };
    assert_eq!(failed, Err("QUOTA_BYTES quota exceeded".into()));
}
