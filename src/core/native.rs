//! Native function-call deltas from providers, assembled into calls.
//!
//! OpenAI-compatible servers stream `tool_calls` deltas by `index`; some reuse index 0 for
//! parallel calls (Ollama), some send a new `id` with every chunk. [`NativeCalls`] turns their
//! deltas into the same [`Piece`]s the text parser produces, so one stream layer serves both.

#![warn(missing_docs)]

use super::parse::Piece;

/// One provider delta of a native tool call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NativeDelta {
    /// The provider's position of the call in its message; deltas of one call share it
    /// (though some servers reuse index 0 for every call).
    pub index: usize,
    /// The provider's id of the call, when this delta carries it.
    pub id: Option<String>,
    /// The tool's name, or a piece of it, when this delta carries it.
    pub name: Option<String>,
    /// A piece of the arguments' JSON text, to append to what came before.
    pub arguments: Option<String>,
}

#[derive(Debug)]
struct Open {
    index: usize,
    slot: usize,
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Assembles native calls. Call [`NativeCalls::push`] per delta and [`NativeCalls::finish`]
/// when the output ends; closed calls come out as `Piece::NativeClose`.
#[derive(Debug, Default)]
pub struct NativeCalls {
    open: Vec<Open>,
    slots: usize,
}

impl NativeCalls {
    /// Takes one delta and returns the pieces it makes: a call opened, its name once known,
    /// its arguments as they come, and the close of a call whose index was reused.
    pub fn push(&mut self, delta: NativeDelta) -> Vec<Piece> {
        let mut out = Vec::new();
        // A name for an index whose call already has a name (and a different id, or arguments
        // already) is a new call on a reused index.
        let reused = self.open.iter().position(|o| {
            o.index == delta.index
                && delta.name.as_deref().is_some_and(|n| !n.is_empty())
                && !o.name.is_empty()
                && (delta
                    .id
                    .as_ref()
                    .is_some_and(|id| o.id.as_ref() != Some(id))
                    || !o.arguments.is_empty())
        });
        if let Some(at) = reused {
            let done = self.open.remove(at);
            out.push(close(done, true));
        }
        let at = match self.open.iter().position(|o| o.index == delta.index) {
            Some(at) => at,
            None => {
                let slot = self.slots;
                self.slots += 1;
                out.push(Piece::CallOpen { slot });
                self.open.push(Open {
                    index: delta.index,
                    slot,
                    id: None,
                    name: String::new(),
                    arguments: String::new(),
                });
                self.open.len() - 1
            }
        };
        let call = &mut self.open[at];
        if call.id.is_none() {
            call.id = delta.id;
        }
        if let Some(name) = delta.name.filter(|n| !n.is_empty()) {
            if call.name.is_empty() {
                call.name = name;
                out.push(Piece::CallName {
                    slot: call.slot,
                    name: call.name.clone(),
                });
                // Arguments that came before the name were held by the stream layer.
            } else if call.name != name {
                // Some servers repeat the name; a different one is appended (split names).
                call.name.push_str(&name);
            }
        }
        if let Some(arguments) = delta.arguments.filter(|a| !a.is_empty()) {
            call.arguments.push_str(&arguments);
            out.push(Piece::CallArgs {
                slot: call.slot,
                delta: arguments,
            });
        }
        out
    }

    /// The output ended; `cut_by_limit` when the provider stopped at the token limit.
    pub fn finish(&mut self, cut_by_limit: bool) -> Vec<Piece> {
        self.open
            .drain(..)
            .map(|o| close(o, !cut_by_limit))
            .collect()
    }

    /// The provider's id for a slot's call, when it gave one.
    pub fn provider_id(&self, slot: usize) -> Option<&str> {
        self.open
            .iter()
            .find(|o| o.slot == slot)
            .and_then(|o| o.id.as_deref())
    }
}

fn close(call: Open, complete: bool) -> Piece {
    Piece::NativeClose {
        slot: call.slot,
        name: call.name,
        arguments: call.arguments,
        complete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(
        index: usize,
        id: Option<&str>,
        name: Option<&str>,
        args: Option<&str>,
    ) -> NativeDelta {
        NativeDelta {
            index,
            id: id.map(Into::into),
            name: name.map(Into::into),
            arguments: args.map(Into::into),
        }
    }

    #[test]
    fn deltas_by_index() {
        let mut calls = NativeCalls::default();
        let mut pieces = Vec::new();
        pieces.extend(calls.push(delta(0, Some("a"), Some("add"), Some(""))));
        pieces.extend(calls.push(delta(1, Some("b"), Some("sub"), Some("{\"x\""))));
        pieces.extend(calls.push(delta(0, None, None, Some("{\"a\":1}"))));
        pieces.extend(calls.push(delta(1, None, None, Some(":2}"))));
        pieces.extend(calls.finish(false));
        assert_eq!(
            pieces
                .iter()
                .filter(|p| matches!(p, Piece::CallOpen { .. }))
                .count(),
            2
        );
        let close = |slot: usize, name: &str, arguments: &str| Piece::NativeClose {
            slot,
            name: name.into(),
            arguments: arguments.into(),
            complete: true,
        };
        assert!(pieces.contains(&close(0, "add", "{\"a\":1}")));
        assert!(pieces.contains(&close(1, "sub", "{\"x\":2}")));
    }

    #[test]
    fn a_reused_index_starts_a_new_call_and_new_ids_per_chunk_do_not() {
        let mut calls = NativeCalls::default();
        let mut pieces = Vec::new();
        pieces.extend(calls.push(delta(0, Some("x1"), Some("add"), Some("{\"a\":1}"))));
        pieces.extend(calls.push(delta(0, Some("x2"), Some("add"), Some("{\"a\":2}"))));
        pieces.extend(calls.push(delta(0, Some("x3"), None, Some(""))));
        pieces.extend(calls.finish(true));
        let closes: Vec<_> = pieces
            .iter()
            .filter(|p| matches!(p, Piece::NativeClose { .. }))
            .collect();
        assert_eq!(closes.len(), 2);
        assert!(matches!(
            closes[0],
            Piece::NativeClose {
                slot: 0,
                complete: true,
                ..
            }
        ));
        assert!(matches!(
            closes[1],
            Piece::NativeClose {
                slot: 1,
                complete: false,
                ..
            }
        ));
    }
}
