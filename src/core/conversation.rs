//! Conversations: the history of turns, with tools fixed when the conversation is created.
//!
//! A conversation's own tools (local and visitor tools), middleware and output schema never
//! change; to change them, start a new conversation with the history
//! ([`Conversation::with_tools`]). The tools of sources (the page, MCP servers) are read at
//! the start of every run and passed in [`Turn`], with the client's frontend tools.

#![warn(missing_docs)]

use serde_json::Value;

use super::agui::Message;
use super::run::{Middleware, Run, RunInput, RunTool, SourceError, DEFAULT_MAX_STEPS};

/// What a conversation is created with.
#[derive(Debug, Clone, Default)]
pub struct ConversationOptions {
    /// The conversation's own tools (local and visitor tools), offered in every run.
    pub tools: Vec<RunTool>,
    /// The conversation's middleware, wrapped inside the turn's global middleware.
    pub middleware: Vec<Middleware>,
    /// A JSON schema the final answer must follow, given through `submit_result`; `None`
    /// for free text.
    pub output_schema: Option<Value>,
    /// Whether an invalid call is asked again once before its error goes to the model.
    pub reask: bool,
    /// Whether a repair hook is configured: a call repair could not make valid is handed to
    /// it before its error goes to the model.
    pub hook: bool,
}

/// What one turn brings: the person's message or messages and what was read for this run.
#[derive(Debug, Clone)]
pub struct Turn {
    /// The id of the run this turn starts.
    pub run_id: String,
    /// New messages (usually one user message) appended to the history.
    pub messages: Vec<Message>,
    /// Tools read from sources for this run (page, MCP).
    pub source_tools: Vec<RunTool>,
    /// The sources that failed or left tools out while being read, reported by the run.
    pub source_errors: Vec<SourceError>,
    /// The client's frontend tools; they win name clashes.
    pub frontend_tools: Vec<RunTool>,
    /// Global middleware, which wraps the conversation's.
    pub global_middleware: Vec<Middleware>,
    /// The most tool calls this turn may make.
    pub max_steps: usize,
    /// Set by the caller of the turn, never by the model; given to every tool.
    pub context: Value,
}

impl Turn {
    /// A turn bringing these messages, with no tools from sources or the client, no global
    /// middleware, no context and the default step budget.
    pub fn new(run_id: impl Into<String>, messages: Vec<Message>) -> Self {
        Turn {
            run_id: run_id.into(),
            messages,
            source_tools: Vec::new(),
            source_errors: Vec::new(),
            frontend_tools: Vec::new(),
            global_middleware: Vec::new(),
            max_steps: DEFAULT_MAX_STEPS,
            context: Value::Null,
        }
    }
}

/// A conversation (an AG-UI thread).
#[derive(Debug, Clone)]
pub struct Conversation {
    id: String,
    options: ConversationOptions,
    messages: Vec<Message>,
}

impl Conversation {
    /// An empty conversation with this id (the AG-UI thread id) and these fixed options.
    pub fn new(id: impl Into<String>, options: ConversationOptions) -> Self {
        Conversation {
            id: id.into(),
            options,
            messages: Vec::new(),
        }
    }

    /// A new conversation with this one's history and other options (tools, middleware,
    /// output schema).
    pub fn with_tools(&self, id: impl Into<String>, options: ConversationOptions) -> Self {
        Conversation {
            id: id.into(),
            options,
            messages: self.messages.clone(),
        }
    }

    /// The conversation's id, which its runs carry as their thread id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The history: every message of every turn kept so far, in order.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Starts a run for a turn: the conversation's tools, then the sources', then the
    /// frontend tools (which win clashes).
    pub fn start(&self, turn: Turn) -> Run {
        let mut messages = self.messages.clone();
        messages.extend(turn.messages);
        let mut input = RunInput::new(self.id.clone(), turn.run_id, messages);
        input.tools = self.options.tools.clone();
        input.tools.extend(turn.source_tools);
        input.tools.extend(turn.frontend_tools);
        input.source_errors = turn.source_errors;
        input.max_steps = turn.max_steps;
        input.context = turn.context;
        input.output_schema = self.options.output_schema.clone();
        input.middleware = turn.global_middleware;
        input
            .middleware
            .extend(self.options.middleware.iter().cloned());
        input.reask = self.options.reask;
        input.hook = self.options.hook;
        Run::start(input)
    }

    /// Keeps what a run added to the conversation (call it when the run has ended, or was
    /// stopped: what happened stays in the history).
    pub fn absorb(&mut self, run: &Run) {
        self.messages = run.messages().to_vec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::run::{Input, Output, ToolKind};
    use crate::core::toolset::ToolSpec;
    use serde_json::json;

    fn drain(run: &mut Run) -> Vec<Output> {
        std::iter::from_fn(|| run.poll()).collect()
    }

    #[test]
    fn turns_build_on_the_history_and_tools_stay_fixed() {
        let visitor = RunTool {
            spec: ToolSpec {
                name: "ask".into(),
                description: String::new(),
                input_schema: json!({"type": "object"}),
            },
            kind: ToolKind::Visitor,
            data_source: None,
        };
        let mut conversation = Conversation::new(
            "thread_9",
            ConversationOptions {
                tools: vec![visitor],
                ..Default::default()
            },
        );
        let mut run = conversation.start(Turn::new(
            "run_1",
            vec![Message::User {
                id: "u1".into(),
                content: "Hi".into(),
            }],
        ));
        let outputs = drain(&mut run);
        let Some(Output::CallModel(request)) =
            outputs.iter().find(|o| matches!(o, Output::CallModel(_)))
        else {
            panic!()
        };
        assert_eq!(
            request
                .tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>(),
            ["ask"]
        );
        run.handle(Input::ModelText("Hello!".into()));
        run.handle(Input::ModelDone {
            cut_by_limit: false,
        });
        drain(&mut run);
        assert!(run.is_done());
        conversation.absorb(&run);
        assert_eq!(conversation.messages().len(), 2);

        let mut second = conversation.start(Turn::new(
            "run_2",
            vec![Message::User {
                id: "u2".into(),
                content: "Again".into(),
            }],
        ));
        let outputs = drain(&mut second);
        let Some(Output::CallModel(request)) =
            outputs.iter().find(|o| matches!(o, Output::CallModel(_)))
        else {
            panic!()
        };
        assert_eq!(request.messages.len(), 3, "the history and the new message");

        let moved = conversation.with_tools("thread_10", ConversationOptions::default());
        assert_eq!(moved.messages(), conversation.messages());
        assert_eq!(moved.id(), "thread_10");
    }
}
