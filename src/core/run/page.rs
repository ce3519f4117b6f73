//! The page tools of a run: a tab's tools as run tools with distinct names, bound to the page
//! tool each stands for, and a page call's answer as the run's tool outcome.

use serde_json::json;

use crate::core::page::call::{CallAnswer, Ended};
use crate::core::page::tabs::TabTools;
use crate::core::page::tool::PageTool;
use crate::core::run::{ToolAnswer, ToolOutcome};

/// A page tool as a run knows it: the name the model calls it by, and the tool itself (its
/// frame, its origin and its definition when the run began).
#[derive(Debug, Clone, PartialEq)]
pub struct PageBinding {
    /// The name the model calls it by.
    pub run_name: String,
    /// The page tool it stands for.
    pub tool: PageTool,
    /// The document its frame listed it from.
    pub document_id: Option<String>,
}

/// The page tools of a run. Equal names in different frames stay distinct: the first frame's
/// tool keeps its name, the others become `name__frameN`, and each such tool's description
/// says which frame and origin it belongs to.
pub fn page_run_tools(
    tools: &TabTools,
) -> (
    Vec<crate::core::run::RunTool>,
    Vec<PageBinding>,
    Vec<crate::core::run::SourceError>,
) {
    use crate::core::run::{RunTool, SourceError, ToolKind};
    let mut out: Vec<RunTool> = Vec::new();
    let mut bindings: Vec<PageBinding> = Vec::new();
    let mut errors = Vec::new();
    for tool in &tools.tools {
        let shared = tools.tools.iter().filter(|t| t.name == tool.name).count() > 1;
        let run_name = if bindings.iter().any(|b| b.tool.name == tool.name) {
            format!("{}__frame{}", tool.name, tool.frame_id)
        } else {
            tool.name.clone()
        };
        if !crate::core::naming::is_valid_name(&run_name, crate::core::limits::MAX_TOOL_NAME_BYTES)
            || bindings.iter().any(|b| b.run_name == run_name)
        {
            errors.push(SourceError {
                source: format!("page frame {} ({})", tool.frame_id, tool.origin),
                message: format!(
                    "`{}` is also offered by another frame, and no distinct name is left for it; this frame's tool is left out",
                    tool.name
                ),
            });
            continue;
        }
        let mut description = match &tool.title {
            Some(title) if !tool.description.contains(title.as_str()) => {
                format!("{title}. {}", tool.description)
            }
            _ => tool.description.clone(),
        };
        if shared {
            let frame = if tool.frame_id == 0 {
                "the top frame".to_owned()
            } else {
                format!("frame {}", tool.frame_id)
            };
            description = format!("(In {frame}, {}.) {description}", tool.origin);
        }
        out.push(RunTool {
            spec: crate::core::toolset::ToolSpec {
                name: run_name.clone(),
                description,
                input_schema: tool.input_schema.clone(),
            },
            kind: ToolKind::Page,
            data_source: tool
                .annotations
                .untrusted_content_hint
                .then(|| format!("page {}", tool.origin)),
        });
        bindings.push(PageBinding {
            run_name,
            document_id: tools.target(tool).document_id,
            tool: tool.clone(),
        });
    }
    for problem in &tools.problems {
        errors.push(SourceError {
            source: format!("page frame {}", problem.frame_id),
            message: problem.message.clone(),
        });
    }
    (out, bindings, errors)
}

/// A page call's answer as a run's tool answer: the result's text; a navigation as where it
/// went, what the destination offers and says (its JSON-LD as a value, not as text in text),
/// written as JSON text for the model; the error; with how the call was allowed and how its
/// result breaks the tool's output schema, for the run's log.
pub fn page_answer(answer: &CallAnswer) -> ToolAnswer {
    let outcome = match &answer.ended {
        Ended::Result { text, .. } | Ended::InFrame { text, .. } => ToolOutcome::Ok(text.clone()),
        Ended::Navigated(to) => ToolOutcome::navigation(
            |key| match key {
                "url" => to.url.as_ref().map(|u| json!(u)),
                "crossOrigin" => to.cross_origin.as_ref().map(|o| json!(o)),
                "tools" => to.tools.as_ref().map(|t| json!(t)),
                "openedTab" => to.opened_tab.map(|t| json!(t)),
                "resultNote" => to.result_note.as_ref().map(|n| json!(n)),
                _ => None,
            },
            to.result.as_deref(),
        ),
        Ended::Failed(error) => ToolOutcome::Error(error.clone()),
    };
    let output_errors = match &answer.ended {
        Ended::Result { output_errors, .. } => output_errors.clone(),
        _ => None,
    };
    ToolAnswer {
        outcome,
        confirmation: answer.confirmation.clone(),
        output_errors,
    }
}

#[cfg(test)]
mod tests;
