//! Per-site policy for page tools: which tools the agent may see on a site, whether every call
//! there is confirmed, whether every result there is wrapped as data, and (for test profiles)
//! whether its acting tools are called without the in-page question. Where several policies
//! match a tool (its origin's and `*`), every one applies (the filters all hold, the flags add
//! up). Only `allowActing` loosens, so it is held tighter than the rest: it needs a policy that
//! names the tool's origin exactly (never `*`), any matching `alwaysConfirm` overrides it, and
//! every call it lets through says so in its answer (`confirmation`).

use serde::{Deserialize, Serialize};

use super::tabs::TabTools;

/// One site's policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SitePolicy {
    /// An origin (`https://shop.example`, `http://127.0.0.1:8080`), or `*` for every site.
    pub origin: String,
    /// Only these tools (by name) are shown to the agent, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Vec<String>>,
    /// Every call of a tool of this site is confirmed in the page, whatever its hints say.
    #[serde(default)]
    pub always_confirm: bool,
    /// Every result of a tool of this site reaches the model wrapped as data, as if the tool
    /// said `untrustedContentHint`.
    #[serde(default)]
    pub untrusted: bool,
    /// For test profiles: a consequential tool of this origin is called without the in-page
    /// question (the call's answer says `allowed by site policy <origin>`). Only on a policy
    /// that names one origin exactly; a matching `alwaysConfirm` wins.
    #[serde(default)]
    pub allow_acting: bool,
}

impl SitePolicy {
    fn matches(&self, origin: &str) -> bool {
        self.origin == "*" || self.origin == origin
    }
}

/// Checks a list of policies: each origin is `*` or `scheme://host[:port]`, named once.
pub fn validate(policies: &[SitePolicy]) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    for policy in policies {
        let origin = policy.origin.as_str();
        if origin != "*" && !is_origin(origin) {
            return Err(format!(
                "site policy: `{origin}` is not an origin (scheme://host[:port], no path) or `*`"
            ));
        }
        if origin == "*" && policy.allow_acting {
            return Err(
                "site policy: `allowActing` needs one exact origin (scheme://host[:port]), not `*`"
                    .into(),
            );
        }
        if seen.contains(&origin) {
            return Err(format!("site policy: `{origin}` is named twice"));
        }
        seen.push(origin);
    }
    Ok(())
}

fn is_origin(text: &str) -> bool {
    crate::core::url::has_origin_shape(text)
}

/// Applies the stored policies, or hides every tool when they could not be read (a policy
/// only ever tightens, so unreadable ones hide all rather than none).
pub fn apply_stored(policies: Result<Vec<SitePolicy>, String>, tools: &mut TabTools) {
    match policies {
        Ok(policies) => {
            apply(&policies, tools);
        }
        Err(message) => {
            tools.tools.clear();
            tools.problems.push(super::tool::ToolProblem {
                frame_id: 0,
                tool: None,
                message,
            });
        }
    }
}

/// Applies the policies to a tab's tools: filtered tools are left out (and counted), flags
/// become hints. `allowActing` holds for a tool only from a policy naming its origin exactly,
/// and only while no matching policy says `alwaysConfirm`.
pub fn apply(policies: &[SitePolicy], tools: &mut TabTools) -> usize {
    let before = tools.tools.len();
    tools.tools.retain(|tool| {
        policies
            .iter()
            .filter(|p| p.matches(&tool.origin))
            .all(|p| p.filter.as_ref().is_none_or(|f| f.contains(&tool.name)))
    });
    for tool in &mut tools.tools {
        let mut always_confirm = false;
        let mut allow_acting = false;
        for policy in policies.iter().filter(|p| p.matches(&tool.origin)) {
            always_confirm |= policy.always_confirm;
            allow_acting |= policy.allow_acting && policy.origin == tool.origin;
            tool.annotations.consequential_hint |= policy.always_confirm;
            tool.annotations.untrusted_content_hint |= policy.untrusted;
        }
        tool.annotations.allow_acting = allow_acting && !always_confirm;
    }
    before - tools.tools.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::page::tool::{Annotations, PageTool};
    use serde_json::json;

    fn tool(name: &str, origin: &str) -> PageTool {
        PageTool {
            name: name.into(),
            title: None,
            description: String::new(),
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: Annotations::default(),
            origin: origin.into(),
            frame_id: 0,
            form: None,
            polyfill: None,
        }
    }

    fn policies(value: serde_json::Value) -> Vec<SitePolicy> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn unreadable_policies_hide_every_tool() {
        let mut tools = TabTools {
            tools: vec![tool("search", "https://shop.test")],
            problems: vec![],
            ..TabTools::default()
        };
        apply_stored(
            Err("the stored site policies are unreadable".into()),
            &mut tools,
        );
        assert!(tools.tools.is_empty());
        assert_eq!(
            tools.problems[0].message,
            "the stored site policies are unreadable"
        );
    }

    #[test]
    fn filters_and_flags_apply_to_their_origin_only() {
        let mut tools = TabTools {
            tools: vec![
                tool("search", "https://shop.test"),
                tool("buy", "https://shop.test"),
                tool("search", "https://ads.test"),
            ],
            problems: vec![],
            ..TabTools::default()
        };
        let list = policies(json!([
            {"origin": "https://shop.test", "filter": ["search"], "alwaysConfirm": true},
            {"origin": "https://ads.test", "untrusted": true}
        ]));
        validate(&list).unwrap();
        assert_eq!(apply(&list, &mut tools), 1);
        let seen: Vec<_> = tools
            .tools
            .iter()
            .map(|t| (t.name.as_str(), t.origin.as_str(), t.annotations))
            .collect();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].0, "search");
        assert!(seen[0].2.consequential_hint && !seen[0].2.untrusted_content_hint);
        assert_eq!(seen[1].1, "https://ads.test");
        assert!(seen[1].2.untrusted_content_hint && !seen[1].2.consequential_hint);
    }

    #[test]
    fn every_matching_policy_holds() {
        let mut tools = TabTools {
            tools: vec![tool("a", "https://x.test"), tool("b", "https://x.test")],
            problems: vec![],
            ..TabTools::default()
        };
        let list = policies(json!([
            {"origin": "*", "filter": ["a", "b"], "untrusted": true},
            {"origin": "https://x.test", "filter": ["b"]}
        ]));
        assert_eq!(apply(&list, &mut tools), 1);
        assert_eq!(tools.tools[0].name, "b");
        assert!(tools.tools[0].annotations.untrusted_content_hint);
    }

    #[test]
    fn allow_acting_needs_the_exact_origin_and_yields_to_always_confirm() {
        let star = policies(json!([{"origin": "*", "allowActing": true}]));
        assert!(validate(&star)
            .unwrap_err()
            .contains("`allowActing` needs one exact origin"));
        let listed = |list: &[SitePolicy]| {
            let mut tools = TabTools {
                tools: vec![tool("buy", "https://x.test"), tool("buy", "https://y.test")],
                ..TabTools::default()
            };
            apply(list, &mut tools);
            let allowed: Vec<bool> = tools
                .tools
                .iter()
                .map(|t| t.annotations.allow_acting)
                .collect();
            allowed
        };
        // Stored unvalidated, a `*` still allows nothing.
        assert_eq!(listed(&star), [false, false]);
        let exact = policies(json!([{"origin": "https://x.test", "allowActing": true}]));
        assert_eq!(listed(&exact), [true, false]);
        let both = policies(json!([
            {"origin": "https://x.test", "allowActing": true},
            {"origin": "*", "alwaysConfirm": true}
        ]));
        validate(&both).unwrap();
        assert_eq!(listed(&both), [false, false]);
        // Not listed: the model and the listing see the page's hints only.
        let mut tools = TabTools {
            tools: vec![tool("buy", "https://x.test")],
            ..TabTools::default()
        };
        apply(&exact, &mut tools);
        let shown = serde_json::to_value(&tools.tools[0]).unwrap();
        assert!(!shown.to_string().contains("allow"), "{shown}");
    }

    #[test]
    fn bad_policies_are_refused_clearly() {
        let bad = policies(json!([{"origin": "https://x.test/path"}]));
        assert!(validate(&bad).unwrap_err().contains("is not an origin"));
        let twice = policies(json!([{"origin": "*"}, {"origin": "*"}]));
        assert!(validate(&twice).unwrap_err().contains("named twice"));
        assert!(serde_json::from_value::<SitePolicy>(
            json!({"origin": "*", "alwaysconfirm": true})
        )
        .is_err());
        validate(&policies(
            json!([{"origin": "http://127.0.0.1:8080"}, {"origin": "chrome-extension://abc"}]),
        ))
        .unwrap();
    }
}
