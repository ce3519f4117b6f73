//! An MCP server as a tool source: its configuration, and its tools as run tools.

use serde::{Deserialize, Serialize};

use super::tools::{namespaced, McpTool};
use crate::core::run::{RunTool, ToolKind};
use crate::core::toolset::ToolSpec;
use crate::core::url::check_base_url;

fn authorization() -> String {
    "authorization".into()
}

fn yes() -> bool {
    true
}

/// A configured MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerConfig {
    /// The name the person gave it (unique among servers).
    pub name: String,
    /// The Streamable HTTP endpoint.
    pub url: String,
    /// Tool names become `namespace__name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The key in session storage sent with every request, when the server wants one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_ref: Option<String>,
    /// The header that carries the key: `authorization` sends `Bearer <key>`, any other
    /// header the key as is.
    #[serde(default = "authorization")]
    pub key_header: String,
    /// A trusted server's destructive tools are not confirmed.
    #[serde(default)]
    pub trusted: bool,
    #[serde(default = "yes")]
    /// Whether its tools are given to runs.
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Time for one request, in ms (else the default).
    pub timeout_ms: Option<u32>,
    /// Only these tools (server names), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Vec<String>>,
}

impl McpServerConfig {
    /// Context7's public server (library docs); the key is optional.
    pub fn context7(key_ref: Option<String>) -> Self {
        McpServerConfig {
            name: "Context7".into(),
            url: "https://mcp.context7.com/mcp".into(),
            namespace: Some("context7".into()),
            key_ref,
            key_header: authorization(),
            trusted: false,
            enabled: true,
            timeout_ms: None,
            filter: None,
        }
    }

    /// Checks the name, URL, namespace and header; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("an MCP server has no name".into());
        }
        check_base_url(&self.url).map_err(|e| {
            format!(
                "MCP server `{}`: {}",
                self.name,
                e.replace("base URL", "URL")
            )
        })?;
        if let Some(ns) = &self.namespace {
            if ns.is_empty()
                || ns.len() > 32
                || !ns
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                return Err(format!(
                    "MCP server `{}`: the namespace must be 1 to 32 of A-Z, a-z, 0-9, '_', '-'",
                    self.name
                ));
            }
        }
        if self.key_header.is_empty()
            || !self
                .key_header
                .bytes()
                // An HTTP token (RFC 9110 §5.6.2): `CONTEXT7_API_KEY` is one.
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        {
            return Err(format!(
                "MCP server `{}`: `{}` is not a header name",
                self.name, self.key_header
            ));
        }
        Ok(())
    }

    /// The header that carries the key.
    pub fn key_header(&self, key: &str) -> (String, String) {
        let name = self.key_header.to_ascii_lowercase();
        let value = if name == "authorization" {
            format!("Bearer {key}")
        } else {
            key.to_owned()
        };
        (name, value)
    }
}

/// A tool of a server as a run sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpRunTool {
    /// The name in the run (namespaced).
    pub run_name: String,
    /// The name on the server.
    pub name: String,
    /// Whether a call is confirmed by the person first.
    pub needs_confirmation: bool,
}

/// A server's tools as run tools: namespaced, filtered, every result wrapped as data.
pub fn run_tools(server: &McpServerConfig, tools: &[McpTool]) -> (Vec<RunTool>, Vec<McpRunTool>) {
    let mut run = Vec::new();
    let mut map = Vec::new();
    for tool in tools {
        if server
            .filter
            .as_ref()
            .is_some_and(|allowed| !allowed.contains(&tool.name))
        {
            continue;
        }
        let run_name = namespaced(server.namespace.as_deref(), &tool.name);
        let description = match &tool.title {
            Some(title) if !tool.description.contains(title.as_str()) => {
                format!("{title}. {}", tool.description)
            }
            _ => tool.description.clone(),
        };
        run.push(RunTool {
            spec: ToolSpec {
                name: run_name.clone(),
                description,
                input_schema: tool.input_schema.to_value(),
            },
            kind: ToolKind::Mcp,
            data_source: Some(format!("MCP server {}", server.name)),
        });
        map.push(McpRunTool {
            run_name,
            name: tool.name.clone(),
            needs_confirmation: tool.needs_confirmation(server.trusted),
        });
    }
    (run, map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::mcp::tools::parse_tools;
    use serde_json::json;

    #[test]
    fn configs_validate_and_carry_keys() {
        let server: McpServerConfig = serde_json::from_value(
            json!({"name": "docs", "url": "https://docs.example/mcp", "keyRef": "docs"}),
        )
        .unwrap();
        assert!(server.enabled && !server.trusted);
        assert_eq!(server.validate(), Ok(()));
        assert_eq!(
            server.key_header("k1"),
            ("authorization".into(), "Bearer k1".into())
        );
        let custom = McpServerConfig {
            key_header: "X-Api-Key".into(),
            ..server.clone()
        };
        assert_eq!(custom.key_header("k1"), ("x-api-key".into(), "k1".into()));
        assert!(McpServerConfig {
            url: "http://docs.example/mcp".into(),
            ..server.clone()
        }
        .validate()
        .is_err());
        assert!(McpServerConfig {
            namespace: Some("a b".into()),
            ..server.clone()
        }
        .validate()
        .is_err());
        assert_eq!(McpServerConfig::context7(None).validate(), Ok(()));
        // Header names are HTTP tokens: `_` is fine, `:` or a space is not.
        let context7 = McpServerConfig {
            key_header: "CONTEXT7_API_KEY".into(),
            ..server.clone()
        };
        assert_eq!(context7.validate(), Ok(()));
        assert_eq!(
            context7.key_header("k1"),
            ("context7_api_key".into(), "k1".into())
        );
        for bad in ["X-Key:", "X Key", "", "Ключ"] {
            let config = McpServerConfig {
                key_header: bad.into(),
                ..server.clone()
            };
            assert!(
                config
                    .validate()
                    .unwrap_err()
                    .contains("is not a header name"),
                "{bad}"
            );
        }
    }

    #[test]
    fn tools_are_namespaced_filtered_and_judged() {
        let (tools, _) = parse_tools(&[
            json!({"name": "search", "annotations": {"readOnlyHint": true}}),
            json!({"name": "delete", "annotations": {"destructiveHint": true}}),
            json!({"name": "hidden"}),
        ]);
        let server = McpServerConfig {
            namespace: Some("docs".into()),
            filter: Some(vec!["search".into(), "delete".into()]),
            ..McpServerConfig::context7(None)
        };
        let (run, map) = run_tools(&server, &tools);
        assert_eq!(
            run.iter().map(|t| t.spec.name.as_str()).collect::<Vec<_>>(),
            ["docs__search", "docs__delete"]
        );
        assert_eq!(run[0].data_source.as_deref(), Some("MCP server Context7"));
        assert_eq!(
            map.iter().map(|m| m.needs_confirmation).collect::<Vec<_>>(),
            [false, true]
        );
        let trusted = McpServerConfig {
            trusted: true,
            ..server
        };
        assert!(run_tools(&trusted, &tools)
            .1
            .iter()
            .all(|m| !m.needs_confirmation));
    }
}
