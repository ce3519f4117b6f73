//! 2026-07-28's turns in a job: `server/discover` not answered with a revision this client
//! speaks statelessly (`initialize` follows, or the end), a request refused for its version
//! (-32022) sent again once, `input_required` answered, and `resend`, which puts the request
//! on a new stream under its new id (also after a broken 2026-07-28 stream).

use serde_json::Value;

use super::{answer, session_purpose, Exchange, Failure, Stage, MAX_MCP_INPUT_ROUNDS};
use crate::core::mcp::modern::{Protocols, MODERN_PROTOCOLS};
use crate::core::mcp::{McpEvent, Outgoing, Purpose, Session, SUPPORTED_PROTOCOLS};

impl Exchange {
    /// `server/discover` was not answered with a version this client speaks statelessly:
    /// an older server, for `initialize` ([`Protocols::Auto`]), or the end ([`Protocols::Modern`]).
    pub(super) fn not_discovered(&mut self, session: &mut Session, why: String, now: f64) {
        if let Some(stream) = self.job.as_ref().and_then(|j| j.reading) {
            self.drop_stream(stream);
        }
        if self.settings.protocols == Protocols::Modern {
            let why = format!(
                "the server does not speak MCP {} ({why})",
                MODERN_PROTOCOLS.join(", ")
            );
            return self.fail(Failure::Rejected(why));
        }
        self.log(format!(
            "server/discover: {why}; connecting with initialize (MCP up to 2025-11-25)"
        ));
        let init = self.initialize(session);
        let Some(job) = self.job.as_mut() else { return };
        job.events.clear();
        job.stage = Stage::Initializing;
        job.outgoing = init.clone();
        job.method = "initialize".into();
        job.deadline = now + f64::from(self.settings.timeout_ms);
        self.send_job(init.request);
    }

    /// The server refused the request's protocol version (-32022): sent again once with a
    /// new id when it names a version this client speaks statelessly; otherwise an older
    /// server when connecting, or the job's failure.
    pub(super) fn version_rejected(
        &mut self,
        session: &mut Session,
        supported: Vec<String>,
        now: f64,
    ) {
        let Some(job) = self.job.as_mut() else { return };
        let ours = MODERN_PROTOCOLS
            .iter()
            .any(|v| supported.iter().any(|s| s == v));
        let discovering = job.stage == Stage::Discovering;
        if ours && !job.version_retried {
            job.version_retried = true;
            let purpose = session_purpose(&job.outgoing);
            let again = session.reissue(&job.outgoing.request, purpose);
            self.log(format!(
                "the server asked for a version of {supported:?}; sent again"
            ));
            return self.resend(again, now);
        }
        if discovering && !ours {
            let why = format!("the server speaks {supported:?}");
            return self.not_discovered(session, why, now);
        }
        let method = job.method.clone();
        self.fail(Failure::Rejected(format!(
            "{method}: the server refused the protocol version, and names {supported:?} (this client speaks {} and {})",
            MODERN_PROTOCOLS.join(", "),
            SUPPORTED_PROTOCOLS.join(", ")
        )))
    }

    /// `input_required`: each input request answered as [`Settings::elicitation`](super::Settings::elicitation) says (an
    /// input the client never declared fails the job), the request sent again with a new id.
    pub(super) fn input_required(
        &mut self,
        session: &mut Session,
        purpose: Purpose,
        requests: serde_json::Map<String, Value>,
        state: Option<Value>,
        now: f64,
    ) {
        let Some(job) = self.job.as_mut() else { return };
        let method = job.method.clone();
        job.input_rounds += 1;
        if job.input_rounds > MAX_MCP_INPUT_ROUNDS {
            return self.fail(Failure::Rejected(format!(
                "{method}: the server still asked for input after {MAX_MCP_INPUT_ROUNDS} rounds"
            )));
        }
        let mut responses = serde_json::Map::new();
        for (key, request) in requests {
            let asked = request.get("method").and_then(Value::as_str).unwrap_or("");
            if asked != "elicitation/create" {
                return self.fail(Failure::Rejected(format!(
                    "{method}: the server asked for {asked:?} input, which this client did not declare"
                )));
            }
            match answer(self.settings.elicitation, asked, request.get("params")) {
                Ok(response) => responses.insert(key, response),
                Err((_, why)) => return self.fail(Failure::Rejected(format!("{method}: {why}"))),
            };
        }
        let Some(job) = self.job.as_ref() else { return };
        let again = session.retry_with_inputs(&job.outgoing.request, purpose, responses, state);
        self.log(format!(
            "{method}: answered the server's input requests; sent again"
        ));
        self.resend(again, now);
    }

    /// The job's request replaced by `again` (a new id), sent on a new stream.
    pub(super) fn resend(&mut self, again: Outgoing, now: f64) {
        let Some(job) = self.job.as_mut() else { return };
        if let Some(stream) = job.reading {
            self.drop_stream(stream);
        }
        let Some(job) = self.job.as_mut() else { return };
        let discovering = job.stage == Stage::Discovering;
        job.events.retain(|e| {
            !matches!(
                e,
                McpEvent::InputRequired { .. } | McpEvent::VersionRejected { .. }
            )
        });
        job.outgoing = again.clone();
        job.stage = if discovering {
            Stage::Discovering
        } else {
            Stage::Awaiting
        };
        job.deadline = job.deadline.max(now);
        self.send_job(again.request);
    }
}
