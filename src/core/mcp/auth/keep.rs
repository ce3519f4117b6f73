//! Where the extension keeps its sign-ins: [`Records`], one [`AuthRecord`] per server name in
//! one storage [`Area`] (the session's, or the local one for a sign-in to remember), and the
//! sign-in state `authState` answers.
//!
//! The shell reads both areas into a [`Records`] value and performs the [`Write`]s its methods
//! return. Invariants: a server's record is in one area at most; a record is used only for
//! the URL it was made for; the state shown never holds a token.

use serde_json::{json, Map, Value};

use super::token::AuthRecord;
use crate::core::mcp::source::McpServerConfig;

/// A storage area of `chrome.storage` that holds sign-ins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// `chrome.storage.session`: gone with the browser session (trusted contexts only).
    Session,
    /// `chrome.storage.local`: for a sign-in made with `remember: true`.
    Local,
}

impl Area {
    /// Both areas, in the order a record is looked for.
    pub const ALL: [Area; 2] = [Area::Session, Area::Local];

    /// The area's name in `chrome.storage`.
    pub fn name(self) -> &'static str {
        match self {
            Area::Session => "session",
            Area::Local => "local",
        }
    }

    /// The storage key of the area's `{serverName: AuthRecord}` map.
    pub fn key(self) -> &'static str {
        match self {
            Area::Session => crate::core::storage::SIGN_INS,
            Area::Local => crate::core::storage::SIGN_INS_KEPT,
        }
    }

    /// Where a new sign-in is kept: `remember` says, else where the previous one was, else
    /// the session.
    pub fn for_sign_in(remember: Option<bool>, previous: Option<Area>) -> Area {
        match (remember, previous) {
            (Some(true), _) => Area::Local,
            (Some(false), _) | (None, None) => Area::Session,
            (None, Some(area)) => area,
        }
    }
}

/// A write for the shell: `chrome.storage[area.name()].set({[area.key()]: map})`.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    /// The area written.
    pub area: Area,
    /// The area's whole map, as it is now.
    pub map: Value,
}

/// The sign-ins of both areas, as read from storage.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Records {
    session: Map<String, Value>,
    local: Map<String, Value>,
}

impl Records {
    /// The maps read from storage; anything not a JSON object is read as empty.
    pub fn read(session: Option<Value>, local: Option<Value>) -> Records {
        let map = |v: Option<Value>| match v {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        Records {
            session: map(session),
            local: map(local),
        }
    }

    fn map(&mut self, area: Area) -> &mut Map<String, Value> {
        match area {
            Area::Session => &mut self.session,
            Area::Local => &mut self.local,
        }
    }

    fn write(&mut self, area: Area) -> Write {
        Write {
            area,
            map: Value::Object(self.map(area).clone()),
        }
    }

    /// The server's record and its area, if there is one for the server's current URL.
    pub fn find(&self, config: &McpServerConfig) -> Option<(AuthRecord, Area)> {
        Area::ALL.into_iter().find_map(|area| {
            let map = match area {
                Area::Session => &self.session,
                Area::Local => &self.local,
            };
            map.get(&config.name)
                .and_then(|v| serde_json::from_value::<AuthRecord>(v.clone()).ok())
                .filter(|r| r.server_url == config.url)
                .map(|r| (r, area))
        })
    }

    /// Keeps `record` for the server `name` in `area` (and takes it out of the other area):
    /// the writes to perform, the other area's first when it changed.
    pub fn store(&mut self, name: &str, record: &AuthRecord, area: Area) -> Vec<Write> {
        let other = match area {
            Area::Session => Area::Local,
            Area::Local => Area::Session,
        };
        let mut writes = Vec::new();
        if self.map(other).remove(name).is_some() {
            writes.push(self.write(other));
        }
        let value = serde_json::to_value(record).expect("an AuthRecord is plain data");
        self.map(area).insert(name.to_owned(), value);
        writes.push(self.write(area));
        writes
    }

    /// Forgets the server `name` in both areas: the writes to perform (none: it had no
    /// sign-in).
    pub fn forget(&mut self, name: &str) -> Vec<Write> {
        Area::ALL
            .into_iter()
            .filter(|&area| self.map(area).remove(name).is_some())
            .collect::<Vec<_>>()
            .into_iter()
            .map(|area| self.write(area))
            .collect()
    }

    /// `authState`: each configured server's sign-in without any token,
    /// `[{server, url, signedIn, kept?, issuer?, scope?, expiresAtMs?, refreshable?, state?}]`.
    pub fn state(&self, servers: &[McpServerConfig], now_ms: f64) -> Value {
        let entries = servers.iter().map(|server| {
            let mut entry = match self.find(server) {
                Some((record, area)) => {
                    let mut summary = record.summary(now_ms);
                    summary["kept"] = json!(area.name());
                    summary
                }
                None => json!({"signedIn": false}),
            };
            entry["server"] = json!(server.name);
            entry["url"] = json!(server.url);
            entry
        });
        Value::Array(entries.collect())
    }
}
