//! The idle policy of the MCP connections the person uses by hand (`listTools({server})`,
//! `callTool({server, …})`), as the [`Host`] keeps it: a server's connection stays open while
//! it is used and for [`BY_HAND_IDLE_MS`] after its last use ends, then is closed; a use that
//! starts meanwhile keeps it open. The shell counts nothing: it tells the host when a use
//! begins and ends, arms the timer the end asks for, and closes the connection when the host
//! says, at that timer, that the server has been idle since.

use std::collections::HashMap;

use super::Host;
pub use crate::core::limits::BY_HAND_IDLE_MS;

/// Each server's uses: those under way, and how many have begun (a use that began after an
/// end makes that end's timer moot).
#[derive(Debug, Default)]
pub struct Uses {
    servers: HashMap<String, (u32, u64)>,
}

/// The end of a use, to be looked at again when [`Idle::after_ms`] have passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idle {
    /// The server.
    pub server: String,
    /// How long to wait before asking [`Host::idle`].
    pub after_ms: u32,
    begun: u64,
}

impl Host {
    /// A use of `server` by hand begins.
    pub fn use_begins(&self, server: &str) {
        let mut uses = self.uses.borrow_mut();
        let (busy, begun) = uses.servers.entry(server.to_owned()).or_default();
        *busy += 1;
        *begun += 1;
    }

    /// A use of `server` by hand ends: the timer to arm.
    pub fn use_ends(&self, server: &str) -> Idle {
        let mut uses = self.uses.borrow_mut();
        let (busy, begun) = uses.servers.entry(server.to_owned()).or_default();
        *busy = busy.saturating_sub(1);
        Idle {
            server: server.to_owned(),
            after_ms: BY_HAND_IDLE_MS,
            begun: *begun,
        }
    }

    /// At an end's timer: whether the server has been unused since (then its connection is to
    /// be closed, and the host forgets the server).
    pub fn idle(&self, end: &Idle) -> bool {
        let mut uses = self.uses.borrow_mut();
        let unused = uses.servers.get(&end.server) == Some(&(0, end.begun));
        if unused {
            uses.servers.remove(&end.server);
        }
        unused
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_closed_only_when_no_use_began_since_the_last_ended() {
        let host = Host::default();
        host.use_begins("docs");
        let first = host.use_ends("docs");
        assert_eq!(first.after_ms, BY_HAND_IDLE_MS);
        // Another use began and ended meanwhile: the first end's timer is moot.
        host.use_begins("docs");
        let second = host.use_ends("docs");
        assert!(!host.idle(&first));
        assert!(host.idle(&second), "unused since the last end");
        assert!(!host.idle(&second), "forgotten once closed");
    }

    #[test]
    fn a_use_still_under_way_keeps_the_server_open() {
        let host = Host::default();
        host.use_begins("docs");
        host.use_begins("docs");
        let one = host.use_ends("docs");
        assert!(!host.idle(&one), "the other use is under way");
        let two = host.use_ends("docs");
        assert!(host.idle(&two));
        // Servers are counted apart.
        host.use_begins("a");
        let a = host.use_ends("a");
        host.use_begins("b");
        assert!(host.idle(&a));
    }
}
