//! The word lists the audit reads tool names and descriptions with: verbs (and which of them
//! read, change or act), the phrases by which a description instructs an agent, and the
//! property names that call for a constrained string.
//!
//! Invariant: every list is lowercase, and matching is on whole words of a name
//! ([`name_words`]) or on a description lowercased with its spaces collapsed ([`normalize`]).

/// Verbs whose tools only read: such a tool should say `readOnlyHint`.
pub const READ_VERBS: &[&str] = &[
    "get",
    "list",
    "search",
    "find",
    "read",
    "fetch",
    "query",
    "lookup",
    "look",
    "count",
    "describe",
    "check",
    "compare",
    "preview",
    "estimate",
    "calculate",
    "compute",
    "validate",
    "verify",
    "track",
    "convert",
    "summarize",
    "inspect",
    "explain",
    "translate",
    "measure",
];

/// Verbs whose tools act on the person's behalf with effects beyond the page (money, messages,
/// bookings, deletions): such a tool should say `consequentialHint`, never `readOnlyHint`.
pub const CONSEQUENTIAL_VERBS: &[&str] = &[
    "delete",
    "destroy",
    "erase",
    "wipe",
    "purge",
    "send",
    "post",
    "publish",
    "submit",
    "pay",
    "buy",
    "purchase",
    "order",
    "checkout",
    "book",
    "reserve",
    "transfer",
    "wire",
    "donate",
    "refund",
    "invite",
    "email",
    "message",
    "reply",
    "comment",
    "rsvp",
    "approve",
    "reject",
    "subscribe",
    "unsubscribe",
    "withdraw",
    "deposit",
    "sell",
    "revoke",
];

/// Verbs whose consequence depends on their object: `remove_topping` edits the pizza on the
/// page, `remove_account` ends an account; `share_pizza` makes a link, `share_file` gives
/// someone access; `cancel_booking` and `place_order` act, `close_dialog` and `place_marker`
/// do not. Such a tool is asked for `consequentialHint` only with evidence ([`consequence`]);
/// without it, the verb counts as a write (`share`: as nothing).
pub const CONTEXT_VERBS: &[&str] = &["remove", "share", "cancel", "close", "place", "confirm"];

/// Objects that make a [`CONTEXT_VERBS`] verb act with consequences: money, messages, people,
/// bookings, accounts and what they own.
pub const CONSEQUENTIAL_NOUNS: &[&str] = &[
    "account",
    "accounts",
    "order",
    "orders",
    "booking",
    "bookings",
    "reservation",
    "reservations",
    "appointment",
    "appointments",
    "meeting",
    "meetings",
    "subscription",
    "subscriptions",
    "membership",
    "payment",
    "payments",
    "invoice",
    "invoices",
    "transaction",
    "transfer",
    "money",
    "funds",
    "card",
    "purchase",
    "ticket",
    "tickets",
    "flight",
    "trip",
    "message",
    "messages",
    "email",
    "emails",
    "post",
    "posts",
    "comment",
    "comments",
    "review",
    "user",
    "users",
    "member",
    "members",
    "friend",
    "friends",
    "contact",
    "contacts",
    "file",
    "files",
    "document",
    "documents",
    "folder",
    "photo",
    "photos",
    "repository",
    "repo",
    "project",
    "access",
    "permission",
    "permissions",
];

/// Words in a description that say a call has consequences.
const CONSEQUENCE_WORDS: &[&str] = &[
    "permanently",
    "permanent",
    "irreversible",
    "irreversibly",
    "cannot be undone",
    "can't be undone",
    "charge",
    "charges",
    "charged",
    "payment",
    "pays",
    "bills",
    "refund",
    "publicly",
    "public link",
    "everyone",
    "recipient",
    "recipients",
    "sends",
    "emails",
    "notifies",
    "invites",
    "grants access",
    "gives access",
];

/// Why a tool named with `words` (the first its verb) and described by `description` acts
/// with consequences, if it does: the verb alone (`pay`, `delete`, `send` …), or a
/// [`CONTEXT_VERBS`] verb with evidence: a consequential object in the name, or a description
/// that says so. `None` when nothing says it.
pub fn consequence(words: &[String], description: &str) -> Option<String> {
    let verb = words.first()?;
    if is_in(CONSEQUENTIAL_VERBS, verb) {
        return Some(format!(
            "the name starts with `{verb}`, an action with consequences"
        ));
    }
    if !is_in(CONTEXT_VERBS, verb) {
        return None;
    }
    if let Some(noun) = words[1..].iter().find(|w| is_in(CONSEQUENTIAL_NOUNS, w)) {
        return Some(format!(
            "the name says `{verb}` of `{noun}`, an action with consequences"
        ));
    }
    let text = normalize(description);
    let said = CONSEQUENCE_WORDS.iter().find(|w| {
        text.match_indices(**w).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + w.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    })?;
    Some(format!(
        "the name starts with `{verb}` and the description says \"{said}\""
    ))
}

/// Verbs whose tools change the person's data or the page's state without being
/// consequential: such a tool must not say `readOnlyHint`.
pub const WRITE_VERBS: &[&str] = &[
    "add",
    "create",
    "update",
    "set",
    "edit",
    "save",
    "change",
    "move",
    "rename",
    "upload",
    "apply",
    "toggle",
    "select",
    "choose",
    "fill",
    "enter",
    "clear",
    "reset",
    "assign",
    "archive",
    "restore",
    "import",
    "sync",
    "mark",
    "flag",
    "pin",
    "unpin",
    "tag",
    "enable",
    "disable",
    "join",
    "leave",
    "connect",
    "disconnect",
    "start",
    "stop",
    "pause",
    "resume",
    "schedule",
    "insert",
    "replace",
    "append",
    "attach",
    "detach",
    "write",
    "modify",
    "register",
    "login",
    "logout",
    "like",
    "follow",
    "unfollow",
    "rate",
    "review",
    "vote",
    "upvote",
    "downvote",
    "increment",
    "decrement",
    "empty",
    "copy",
    "duplicate",
    "draft",
    "initiate",
    "begin",
    "complete",
    "finish",
    "request",
    "install",
    "uninstall",
    "customize",
    "configure",
    "adjust",
    "switch",
    "swap",
    "undo",
    "redo",
    "build",
    "make",
    "prepare",
    "remember",
    "store",
];

/// Verbs whose tools change what the page shows (navigate, open, sort): clear verbs, which no
/// hint rule reads (such a tool is neither read-only nor consequential).
pub const NAVIGATION_VERBS: &[&str] = &[
    "open",
    "go",
    "navigate",
    "show",
    "view",
    "play",
    "scroll",
    "click",
    "zoom",
    "focus",
    "expand",
    "collapse",
    "sort",
    "filter",
    "refresh",
    "reload",
    "download",
    "export",
    "print",
    "visit",
    "load",
    "launch",
    "generate",
    "ask",
    "answer",
    "plan",
    "log",
    "display",
    "hide",
    "highlight",
    "jump",
    "browse",
    "explore",
    "pick",
    "help",
    "greet",
    "say",
    "echo",
    "report",
    "watch",
    "listen",
    "wait",
    "sleep",
    "ping",
    "test",
    "try",
];

/// Verbs that say nothing of what the tool does.
pub const GENERIC_VERBS: &[&str] = &[
    "do", "handle", "process", "run", "execute", "manage", "perform", "invoke", "call", "use",
    "tool", "action", "helper", "misc", "util", "main", "api",
];

/// Phrases that only a prompt injection writes in a tool's description: overriding the
/// agent's instructions, posing as its system prompt, keeping things from the person.
pub const INJECTION_PHRASES: &[&str] = &[
    "ignore previous",
    "ignore all previous",
    "ignore the previous",
    "ignore prior",
    "ignore all prior",
    "ignore the above",
    "ignore all instructions",
    "ignore your instructions",
    "ignore any instructions",
    "ignore other instructions",
    "disregard previous",
    "disregard all",
    "disregard the above",
    "disregard your",
    "disregard any",
    "forget previous",
    "forget all previous",
    "forget your instructions",
    "forget everything",
    "new instructions:",
    "override your",
    "system prompt",
    "system message",
    "<system",
    "</system",
    "[system]",
    "[inst]",
    "<|im_start|>",
    "<|system|>",
    "you are now",
    "developer mode",
    "jailbreak",
    "do not tell the user",
    "don't tell the user",
    "do not tell the person",
    "do not inform the user",
    "do not mention",
    "don't mention",
    "never mention",
    "do not reveal",
    "without telling",
    "without asking",
    "without confirming",
    "without confirmation",
    "without the user's",
    "without user consent",
    "keep this secret",
    "hidden instruction",
    "<important>",
    "</important>",
];

/// Phrases by which a description instructs the agent rather than says what the tool does.
pub const DIRECTIVE_PHRASES: &[&str] = &[
    "you must",
    "you should always",
    "you have to",
    "always call",
    "always use",
    "always run",
    "must always",
    "must be called",
    "must call",
    "call this tool first",
    "call this first",
    "use this tool first",
    "before calling any",
    "before using any",
    "before any other tool",
    "instead of any other",
    "instead of other tools",
    "never call",
    "never use",
    "do not use any other",
    "don't use any other",
    "only use this tool",
    "use this instead",
    "use this one",
    "use me instead",
    "instead of the other",
    "as an ai",
    "as the assistant",
    "assistant must",
    "the agent must",
    "the model must",
    "the ai must",
];

/// Property names that call for a constrained string, and the constraint to add.
pub const SENSITIVE_PROPERTIES: &[(&[&str], &str)] = &[
    (
        &[
            "url", "uri", "href", "link", "website", "endpoint", "redirect",
        ],
        "a URL: add \"format\": \"uri\" (and a \"pattern\" naming the allowed hosts)",
    ),
    (
        &[
            "path",
            "file",
            "filename",
            "filepath",
            "dir",
            "directory",
            "folder",
        ],
        "a path: add a \"pattern\" (or an \"enum\") of the paths allowed",
    ),
    (
        &["command", "cmd", "shell", "exec", "script"],
        "a command: offer an \"enum\" of the commands allowed",
    ),
    (
        &["sql", "where", "orderby"],
        "SQL: take the values and build the query in the page, or offer an \"enum\"",
    ),
    (
        &["html", "markup", "innerhtml"],
        "HTML: take plain text, or add a \"pattern\" and \"maxLength\"",
    ),
    (
        &["email", "mail", "recipient"],
        "an email address: add \"format\": \"email\"",
    ),
];

/// The words of a tool or property name, lowercase: split on `_`, `-`, `.`, spaces, digits
/// after letters and lower-to-upper case changes (`addToCart`, `add_to_cart` and `Add-To-Cart`
/// are all `add`, `to`, `cart`).
pub fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev: Option<char> = None;
    for c in name.chars() {
        let split = !c.is_alphanumeric()
            || (c.is_uppercase() && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()));
        if split && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// `text` lowercased, every run of whitespace one space, curly apostrophes straight.
pub fn normalize(text: &str) -> String {
    let lowered = text.to_lowercase().replace('\u{2019}', "'");
    lowered.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first of `phrases` that `normalized` contains.
pub fn first_phrase(normalized: &str, phrases: &[&'static str]) -> Option<&'static str> {
    phrases.iter().copied().find(|p| normalized.contains(p))
}

/// Whether `word` is in `list`.
pub fn is_in(list: &[&str], word: &str) -> bool {
    list.contains(&word)
}

/// Whether `word` is a verb the audit knows (of any kind).
pub fn is_verb(word: &str) -> bool {
    [
        READ_VERBS,
        CONSEQUENTIAL_VERBS,
        CONTEXT_VERBS,
        WRITE_VERBS,
        NAVIGATION_VERBS,
    ]
    .iter()
    .any(|list| is_in(list, word))
}
