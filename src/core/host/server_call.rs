//! An MCP tool call outside runs as the [`Host`] runs it, for both of its callers: the person
//! by hand (`callTool({server, name, args, timeoutMs?})`) and a page calling a tool exposed to
//! its origin (`callExposed`). The host decides every step: which tool (the server's offer and
//! filter, or the origin's exposures), whether the arguments may be sent, the gate (the
//! person's stored layers, through the host's [`Screening`]), the question asked in the
//! extension's own UI and what a no means, that an exposure still holds after the wait, which
//! result is read and with which secrets redacted, and whether a failed connection is kept.
//! The shell performs one [`Output`] at a time (storage, the kept connections, the person's
//! wait, the MCP exchange) and answers each with one [`Input`] through [`Host::server_call`].
//!
//! Invariant: such a call reaches the server only with the permit its pass gave
//! ([`Mcp::Call`]), and the pass only after the tool and its arguments were decided;
//! the question comes after the gate, so a call the gate refuses asks nobody.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::io::{unasked, Input, Mcp, Output, Pool, Step, Storage, Ui};
use super::screen::Screening;
use super::uses::Idle;
use super::Host;
use crate::core::confirm::{declined, DECLINED};
use crate::core::expose::{
    call_reply, confirmation_text, resolve, still_exposed, CallExposedRequest, PageTool,
};
use crate::core::gate::{refused, Asker, McpCall, Pass};
use crate::core::limits::EXPOSED_QUIET_MS;
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::{namespaced, McpTool};
use crate::core::setup::store::{servers, Area, SERVERS_KEY};
use crate::core::workbench::server::{
    call_answer, find_server, plan_call, timed_out, ServerCallRequest, MANUAL_RUN_PREFIX,
};

/// A call's next move: an output, or its answer: `callTool`'s `{ok, …}` value for a call by
/// hand (a refusal too), the result's text for an exposed tool (its refusal an error).
pub type Next = Step<Result<Value, String>>;

/// One MCP call outside runs under way.
#[derive(Debug)]
pub struct ServerCall {
    caller: Caller,
    /// The id its question is filed under.
    asked: String,
    phase: Phase,
    /// A use by hand counted by the host ([`super::uses`]) and not yet ended.
    using: bool,
    /// The use's end, for the shell's timer, once the call is done.
    idle: Option<Idle>,
}

#[derive(Debug)]
enum Caller {
    ByHand(ServerCallRequest),
    Exposure {
        origin: String,
        tab_id: i64,
        request: CallExposedRequest,
    },
}

/// The call id a question outside runs is filed under, beside its `asked` id.
pub const QUESTION_CALL_ID: &str = "call";

/// The refusal of a page's call while a question of that page waits for the person.
pub const BUSY_WAITS: &str = "busy: a question of this page waits for the person";

/// The refusal of a page's call that asks, shortly after the person declined one of that page.
pub const BUSY_DECLINED: &str =
    "busy: the person declined a call of this page just now; ask again later";

/// A page as its questions are counted: its tab, its origin, the exposed server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PageKey {
    tab_id: i64,
    origin: String,
    server: String,
}

/// The questions of pages' calls of exposed tools, held by the host: at most one open per page
/// and exposure, and none for [`EXPOSED_QUIET_MS`] after the person declined one.
#[derive(Debug, Default)]
pub struct PageQuestions {
    /// The open question of each page, by the id it is filed under.
    open: HashMap<PageKey, String>,
    /// Until when each page that was just declined is refused.
    quiet: HashMap<PageKey, f64>,
}

/// Whether a page may ask now.
enum Ask {
    Open,
    /// A question of the page waits: its id.
    Waits(String),
    /// The person declined one of the page's calls just now.
    Quiet,
}

impl PageQuestions {
    fn ask(&mut self, page: PageKey, asked: &str, now_ms: f64) -> Ask {
        self.quiet.retain(|_, until| *until > now_ms);
        if let Some(open) = self.open.get(&page) {
            return Ask::Waits(open.clone());
        }
        if self.quiet.contains_key(&page) {
            return Ask::Quiet;
        }
        self.open.insert(page, asked.to_owned());
        Ask::Open
    }

    fn answered(&mut self, page: &PageKey, yes: bool, now_ms: f64) {
        self.open.remove(page);
        if !yes {
            self.quiet
                .insert(page.clone(), now_ms + f64::from(EXPOSED_QUIET_MS));
        }
    }
}

/// The tool decided on, and where it is.
#[derive(Debug)]
enum Chosen {
    ByHand {
        server: McpServerConfig,
        tool: McpTool,
        question: Option<String>,
    },
    Exposure(PageTool),
}

#[derive(Debug)]
enum Phase {
    Start,
    Servers,
    Tools(McpServerConfig),
    Exposed,
    Screening(Chosen, Screening),
    Confirming(Chosen, Pass),
    /// Refused while another question of the page waits: its count pushed first.
    Repeated(String),
    StillExposed(Chosen, Pass),
    Calling(Chosen),
    Done,
}

impl ServerCall {
    /// `callTool({server, …})` by the person; `id` is unique to this call (its question is
    /// filed under `manual-<id>`).
    pub fn by_hand(request: ServerCallRequest, id: &str) -> ServerCall {
        ServerCall {
            caller: Caller::ByHand(request),
            asked: format!("{MANUAL_RUN_PREFIX}{id}"),
            phase: Phase::Start,
            using: false,
            idle: None,
        }
    }

    /// `callExposed({name, args})` from a page of `origin` (as Chrome reported the sender);
    /// `id` is unique to this call (its question is filed under `exposed_<id>`).
    pub fn exposed(
        origin: String,
        tab_id: i64,
        request: CallExposedRequest,
        id: &str,
    ) -> ServerCall {
        ServerCall {
            caller: Caller::Exposure {
                origin,
                tab_id,
                request,
            },
            asked: format!("exposed_{id}"),
            phase: Phase::Start,
            using: false,
            idle: None,
        }
    }

    /// Whether the person called it by hand (else a page, through an exposure): each keeps its
    /// own connections.
    pub fn is_by_hand(&self) -> bool {
        matches!(self.caller, Caller::ByHand(_))
    }

    /// Once a call by hand is done: the end of its use, whose timer the shell arms (then
    /// [`Host::idle`] says whether the server's connection is to be closed).
    pub fn take_idle(&mut self) -> Option<Idle> {
        self.idle.take()
    }

    /// The page that asks, for an exposed tool's call that has chosen its tool.
    fn page(&self, chosen: &Chosen) -> Option<PageKey> {
        match (&self.caller, chosen) {
            (Caller::Exposure { origin, tab_id, .. }, Chosen::Exposure(tool)) => Some(PageKey {
                tab_id: *tab_id,
                origin: origin.clone(),
                server: tool.server.clone(),
            }),
            _ => None,
        }
    }

    /// The answer of a refusal, in the caller's shape.
    fn refusal(&self, error: String) -> Next {
        Step::Done(match self.caller {
            Caller::ByHand(_) => Ok(refused(&error)),
            Caller::Exposure { .. } => Err(error),
        })
    }

    /// The call's names as the gate reads them: as a run would know the tool, and its own.
    fn names(&self, chosen: &Chosen) -> Vec<String> {
        match (&self.caller, chosen) {
            (Caller::ByHand(_), Chosen::ByHand { server, tool, .. }) => vec![
                tool.name.clone(),
                namespaced(server.namespace.as_deref(), &tool.name),
            ],
            (Caller::Exposure { request, .. }, Chosen::Exposure(tool)) => {
                vec![request.name.clone(), tool.tool.name.clone()]
            }
            _ => Vec::new(),
        }
    }
}

impl Host {
    /// Feeds the input of the last effect (`None` for the first) and says what to do next.
    /// An input the call did not ask for ends it with an internal error (a bug in the shell,
    /// said as such); nothing is sent then.
    /// A call by hand is one use of its server's kept connection, from its start to its end.
    pub fn server_call(&self, call: &mut ServerCall, input: Option<Input>, now_ms: f64) -> Next {
        if let (Phase::Start, None, Caller::ByHand(request)) = (&call.phase, &input, &call.caller) {
            self.use_begins(&request.server);
            call.using = true;
        }
        let effect = self.server_step(call, input, now_ms);
        if matches!(effect, Step::Done(_)) && std::mem::take(&mut call.using) {
            if let Caller::ByHand(request) = &call.caller {
                call.idle = Some(self.use_ends(&request.server));
            }
        }
        effect
    }

    fn server_step(&self, call: &mut ServerCall, input: Option<Input>, now_ms: f64) -> Next {
        let phase = std::mem::replace(&mut call.phase, Phase::Done);
        match (phase, input) {
            (Phase::Start, None) => match &call.caller {
                Caller::ByHand(_) => {
                    call.phase = Phase::Servers;
                    Step::Do(Output::Storage(Storage::Read {
                        area: Area::Local,
                        key: SERVERS_KEY.into(),
                    }))
                }
                Caller::Exposure { origin, .. } => {
                    let origin = origin.clone();
                    call.phase = Phase::Exposed;
                    Step::Do(Output::Mcp(Mcp::Exposed { origin }))
                }
            },
            (Phase::Servers, Some(Input::Read(stored))) => {
                let Caller::ByHand(request) = &call.caller else {
                    return ended("the servers");
                };
                let found = stored.and_then(servers);
                match found.and_then(|s| Ok(find_server(&s, &request.server)?.clone())) {
                    Err(error) => Step::Done(Err(error)),
                    Ok(server) => {
                        call.phase = Phase::Tools(server.clone());
                        let pool = Pool::ByHand;
                        Step::Do(Output::Mcp(Mcp::Tools { pool, server }))
                    }
                }
            }
            (Phase::Tools(server), Some(Input::McpTools(tools))) => {
                let Caller::ByHand(request) = &call.caller else {
                    return ended("the server's tools");
                };
                let planned = match tools.map(|tools| plan_call(&server, &tools, request)) {
                    Err(error) => return Step::Done(Err(error)),
                    Ok(Err(refusal)) => return Step::Done(Ok(refusal)),
                    Ok(Ok(planned)) => planned,
                };
                let chosen = Chosen::ByHand {
                    server,
                    tool: planned.tool,
                    question: planned.question,
                };
                self.screen_start(call, chosen, now_ms)
            }
            (Phase::Exposed, Some(Input::Exposed(tools))) => {
                let Caller::Exposure { request, .. } = &call.caller else {
                    return ended("the exposed tools");
                };
                match resolve(&tools, &request.name) {
                    Err(error) => Step::Done(Err(error)),
                    Ok(tool) => {
                        let chosen = Chosen::Exposure(tool.clone());
                        self.screen_start(call, chosen, now_ms)
                    }
                }
            }
            (Phase::Screening(chosen, screening), Some(fed)) => {
                self.screen_on(call, chosen, screening, Some(fed), now_ms)
            }
            (Phase::Repeated(busy), Some(Input::Pushed)) => Step::Done(Err(busy)),
            (Phase::Confirming(chosen, pass), Some(Input::Confirmed(yes))) => {
                if let Some(page) = call.page(&chosen) {
                    self.questions.borrow_mut().answered(&page, yes, now_ms);
                }
                self.confirmed(call, chosen, pass, yes)
            }
            (Phase::StillExposed(chosen, pass), Some(Input::Exposures(exposures))) => {
                let (Caller::Exposure { origin, .. }, Chosen::Exposure(tool)) =
                    (&call.caller, &chosen)
                else {
                    return ended("the exposures");
                };
                match still_exposed(&exposures, origin, tool) {
                    Err(error) => Step::Done(Err(error)),
                    Ok(()) => send(call, chosen, pass),
                }
            }
            (Phase::Calling(chosen), Some(Input::McpCalled { result, secrets })) => {
                Step::Done(match (&call.caller, chosen, result) {
                    (Caller::ByHand(request), _, None) => Ok(timed_out(request)),
                    (Caller::ByHand(_), Chosen::ByHand { tool, .. }, Some(result)) => {
                        Ok(call_answer(&tool, result, &secrets))
                    }
                    (Caller::Exposure { request, .. }, _, None) => {
                        Err(crate::core::expose::not_connected(&request.name))
                    }
                    (Caller::Exposure { .. }, Chosen::Exposure(tool), Some(result)) => {
                        call_reply(&tool.tool, &result, &secrets).map(Value::String)
                    }
                    _ => Err("internal error: a call's tool of another caller".into()),
                })
            }
            (_, input) => ended(unasked(input.as_ref())),
        }
    }

    /// The person's answer: a no declines, a yes sends (an exposure checked again first).
    fn confirmed(&self, call: &mut ServerCall, chosen: Chosen, pass: Pass, yes: bool) -> Next {
        match (yes, chosen) {
            (false, _) => match call.caller {
                Caller::ByHand(_) => Step::Done(Ok(declined())),
                Caller::Exposure { .. } => Step::Done(Err(DECLINED.into())),
            },
            // A page's exposures may have changed while the person was asked.
            (true, chosen @ Chosen::Exposure(_)) => {
                call.phase = Phase::StillExposed(chosen, pass);
                Step::Do(Output::Storage(Storage::Exposures))
            }
            (true, chosen @ Chosen::ByHand { .. }) => send(call, chosen, pass),
        }
    }

    /// The gate's screening of the chosen tool begins.
    fn screen_start(&self, call: &mut ServerCall, chosen: Chosen, now_ms: f64) -> Next {
        let names = call.names(&chosen);
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let asker = match call.caller {
            Caller::ByHand(_) => Asker::ByHand,
            Caller::Exposure { .. } => Asker::Exposure,
        };
        self.screen_on(call, chosen, Screening::new(asker, &names), None, now_ms)
    }

    /// One step of the screening; past the gate, the question (when the tool needs one) or
    /// the call.
    fn screen_on(
        &self,
        call: &mut ServerCall,
        chosen: Chosen,
        mut screening: Screening,
        input: Option<Input>,
        now_ms: f64,
    ) -> Next {
        let pass = match self.screen(&mut screening, input) {
            Step::Done(Ok(pass)) => pass,
            Step::Done(Err(error)) => return call.refusal(error),
            Step::Do(output) => {
                call.phase = Phase::Screening(chosen, screening);
                return Step::Do(output);
            }
        };
        let question = match (&call.caller, &chosen) {
            (_, Chosen::ByHand { question, .. }) => question.clone(),
            (
                Caller::Exposure {
                    origin, request, ..
                },
                Chosen::Exposure(tool),
            ) => match confirmation_text(origin, tool, &request.args) {
                Err(error) => return Step::Done(Err(error)),
                Ok(question) => question,
            },
            _ => return ended("a tool of another caller"),
        };
        let Some(question) = question else {
            return send(call, chosen, pass);
        };
        let (server, tool) = match &chosen {
            Chosen::ByHand { server, tool, .. } => (server.name.clone(), tool.name.clone()),
            Chosen::Exposure(tool) => (tool.server.clone(), tool.tool.name.clone()),
        };
        // A page puts one question at a time to the person, and none just after a no.
        if let Some(page) = call.page(&chosen) {
            let mut questions = self.questions.borrow_mut();
            match questions.ask(page, &call.asked, now_ms) {
                Ask::Open => {}
                Ask::Waits(asked) => {
                    self.waits.borrow_mut().repeated(&asked, QUESTION_CALL_ID);
                    call.phase = Phase::Repeated(BUSY_WAITS.into());
                    return Step::Do(Output::Ui(Ui::Push {
                        kind: "pending".into(),
                        body: Value::Object(Map::new()),
                    }));
                }
                Ask::Quiet => return Step::Done(Err(BUSY_DECLINED.into())),
            }
        }
        let args = arguments(&call.caller).clone();
        call.phase = Phase::Confirming(chosen, pass);
        Step::Do(Output::Ui(Ui::Confirm {
            asked: call.asked.clone(),
            call_id: QUESTION_CALL_ID.into(),
            server,
            tool,
            args,
            question,
        }))
    }
}

/// The arguments as the caller gave them (and as they are sent).
fn arguments(caller: &Caller) -> &Map<String, Value> {
    match caller {
        Caller::ByHand(request) => &request.args,
        Caller::Exposure { request, .. } => &request.args,
    }
}

/// The call sent with the pass's permit.
fn send(call: &mut ServerCall, chosen: Chosen, pass: Pass) -> Next {
    let (server, tool, within_ms, forget_on_error) = match (&call.caller, &chosen) {
        (Caller::ByHand(request), Chosen::ByHand { server, tool, .. }) => (
            server.name.clone(),
            tool.clone(),
            Some(request.timeout_ms),
            false,
        ),
        // After a failure the next call starts with a fresh connection (and a fresh listing).
        (Caller::Exposure { .. }, Chosen::Exposure(tool)) => {
            (tool.server.clone(), tool.tool.clone(), None, true)
        }
        _ => return ended("a tool of another caller"),
    };
    let arguments = arguments(&call.caller).clone();
    let pool = match call.caller {
        Caller::ByHand(_) => Pool::ByHand,
        Caller::Exposure { .. } => Pool::Exposures,
    };
    call.phase = Phase::Calling(chosen);
    Step::Do(Output::Mcp(Mcp::Call {
        pool,
        server,
        permit: Box::new(pass.permit(McpCall { tool, arguments })),
        within_ms,
        forget_on_error,
    }))
}

fn ended(what: &str) -> Next {
    Step::Done(Err(format!(
        "internal error: {what} came where the call did not ask for it"
    )))
}

#[cfg(test)]
mod tests;
