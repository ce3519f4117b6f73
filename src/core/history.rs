//! A conversation's history rebuilt from a run's stored AG-UI events: what a cut run (or a
//! run recorded as a test) said and called, each call left without a result marked as one
//! that may have run. A leaf: it reads AG-UI's types only, so the conversations
//! (`core::ops::threads`) and the recorded tests (`core::evals::record`) share it without
//! importing each other.

use serde_json::Value;

use crate::core::agui::{Event, Message, Role, ToolCall};

/// What the tool message of a call cut by a worker restart says to the model.
pub const MAY_HAVE_RUN: &str = "No result: the run was cut (the browser stopped the extension's worker) before this call's result was stored. The call may have run: check its effect before calling it again.";

/// A run's messages rebuilt from its stored events, on top of `base` (the conversation
/// before it, with its new messages): a snapshot replaces them all, the other events add
/// text, calls and results. Each call left without a result gets a tool message saying it
/// may have run ([`MAY_HAVE_RUN`]); a call whose arguments were cut short gets `{}`. The
/// messages and the names of those calls.
pub fn rebuild(base: Vec<Message>, events: &[Value]) -> (Vec<Message>, Vec<String>) {
    let mut messages = base;
    for event in events {
        let Ok(event) = serde_json::from_value::<Event>(event.clone()) else {
            continue;
        };
        match event {
            Event::MessagesSnapshot { messages: all } => messages = all,
            Event::TextMessageStart {
                message_id,
                role: Role::Assistant,
            } => assistant(&mut messages, &message_id),
            Event::TextMessageContent { message_id, delta } => {
                if let Some(Message::Assistant { content, .. }) = find(&mut messages, &message_id) {
                    content.get_or_insert_with(String::new).push_str(&delta);
                }
            }
            Event::ToolCallStart {
                tool_call_id,
                tool_call_name,
                parent_message_id,
            } => {
                let parent = parent_message_id.unwrap_or_else(|| tool_call_id.clone());
                assistant(&mut messages, &parent);
                if let Some(Message::Assistant { tool_calls, .. }) = find(&mut messages, &parent) {
                    tool_calls.push(ToolCall::function(tool_call_id, tool_call_name, ""));
                }
            }
            Event::ToolCallArgs {
                tool_call_id,
                delta,
            } => {
                if let Some(call) = call_mut(&mut messages, &tool_call_id) {
                    call.function.arguments.push_str(&delta);
                }
            }
            Event::ToolCallResult {
                message_id,
                tool_call_id,
                content,
                ..
            } => {
                let known = messages.iter().any(
                    |m| matches!(m, Message::Tool { tool_call_id: id, .. } if *id == tool_call_id),
                );
                if !known {
                    // The text the model was given (a result's media parts are not).
                    messages.push(Message::Tool {
                        id: message_id,
                        content: content.text(),
                        tool_call_id,
                    });
                }
            }
            _ => {}
        }
    }
    let mut cut = Vec::new();
    let mut i = 0;
    while i < messages.len() {
        let calls = match &mut messages[i] {
            Message::Assistant { tool_calls, .. } => {
                for call in tool_calls.iter_mut() {
                    let args = serde_json::from_str::<Value>(&call.function.arguments);
                    if !args.is_ok_and(|v| v.is_object()) {
                        call.function.arguments = "{}".into();
                    }
                }
                tool_calls.clone()
            }
            _ => Vec::new(),
        };
        // After the results that follow the message already.
        let mut at = i + 1;
        while matches!(messages.get(at), Some(Message::Tool { .. })) {
            at += 1;
        }
        for call in calls {
            let answered = messages.iter().any(
                |m| matches!(m, Message::Tool { tool_call_id, .. } if *tool_call_id == call.id),
            );
            if !answered {
                cut.push(call.function.name.clone());
                let message = Message::Tool {
                    id: format!("{}-cut", call.id),
                    content: MAY_HAVE_RUN.into(),
                    tool_call_id: call.id.clone(),
                };
                messages.insert(at, message);
                at += 1;
            }
        }
        i += 1;
    }
    (messages, cut)
}

fn find<'a>(messages: &'a mut [Message], id: &str) -> Option<&'a mut Message> {
    messages.iter_mut().rev().find(|m| match m {
        Message::Assistant { id: own, .. } => own == id,
        _ => false,
    })
}

fn assistant(messages: &mut Vec<Message>, id: &str) {
    if find(messages, id).is_none() {
        messages.push(Message::Assistant {
            id: id.to_owned(),
            content: None,
            tool_calls: Vec::new(),
        });
    }
}

fn call_mut<'a>(messages: &'a mut [Message], call_id: &str) -> Option<&'a mut ToolCall> {
    messages.iter_mut().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls.iter_mut().find(|c| c.id == call_id),
        _ => None,
    })
}

#[cfg(test)]
mod tests;
