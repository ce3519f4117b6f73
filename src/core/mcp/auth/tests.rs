//! The sign-in's unit tests: header parsing, discovery URLs, metadata checks, tokens and the
//! whole [`super::Flow`] against scripted answers.

use super::*;
use crate::core::http::HttpRequest;
use crate::core::mcp::LATEST_PROTOCOL;
use serde_json::{json, Value};

const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";

fn secrets() -> FlowSecrets {
    FlowSecrets {
        verifier: VERIFIER.into(),
        state: "state-0123456789".into(),
    }
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request
        .headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn fetch(flow: &Flow) -> HttpRequest {
    match flow.step() {
        Step::Fetch(request) => request,
        other => panic!("expected a fetch, got {other:?}"),
    }
}

#[test]
fn www_authenticate_challenges_and_params() {
    let header = r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp", error_description="needs \"write\"""#;
    let challenges = parse_www_authenticate(header);
    assert_eq!(challenges.len(), 1);
    let c = BearerChallenge::from_header(Some(header));
    assert_eq!(c.scope.as_deref(), Some("mcp:basic mcp:write"));
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("https://mcp.example/.well-known/oauth-protected-resource/mcp")
    );
    assert!(c.insufficient_scope());
    assert_eq!(c.error_description.as_deref(), Some(r#"needs "write""#));

    // Several challenges, a token68, unquoted values, odd case.
    let many = parse_www_authenticate(
        r#"Basic dXNlcjpwYXNz==, DPoP algs="ES256", BEARER realm=mcp,scope="a b" , resource_metadata=https://x.example/m"#,
    );
    let schemes: Vec<&str> = many.iter().map(|c| c.scheme.as_str()).collect();
    assert_eq!(schemes, ["basic", "dpop", "bearer"]);
    let bearer = BearerChallenge::from_header(Some(
        r#"Basic dXNlcjpwYXNz==, DPoP algs="ES256", BEARER realm=mcp,scope="a b" , resource_metadata=https://x.example/m"#,
    ));
    assert_eq!(bearer.scope.as_deref(), Some("a b"));
    assert_eq!(
        bearer.resource_metadata.as_deref(),
        Some("https://x.example/m")
    );
    assert!(!bearer.insufficient_scope());

    assert_eq!(
        BearerChallenge::from_header(None),
        BearerChallenge::default()
    );
    assert_eq!(
        BearerChallenge::from_header(Some("Basic realm=\"x\"")),
        BearerChallenge::default()
    );
    assert_eq!(
        BearerChallenge::from_header(Some("Bearer")),
        BearerChallenge::default()
    );
    // Broken input is no panic.
    for text in [
        "",
        ",,,",
        "=",
        "Bearer scope=\"unterminated",
        "Bearer ===",
        "\"",
        "Bearer a=\"\\",
    ] {
        let _ = parse_www_authenticate(text);
    }
}

#[test]
fn urls_discovery_order_and_https() {
    assert_eq!(
        resource_metadata_urls("https://mcp.example/api/mcp/", None),
        [
            "https://mcp.example/.well-known/oauth-protected-resource/api/mcp",
            "https://mcp.example/.well-known/oauth-protected-resource"
        ]
    );
    assert_eq!(
        resource_metadata_urls("https://mcp.example:8443", Some("https://m.example/prm")),
        [
            "https://m.example/prm",
            "https://mcp.example:8443/.well-known/oauth-protected-resource"
        ]
    );
    assert_eq!(
        authorization_server_metadata_urls("https://auth.example/tenant1"),
        [
            "https://auth.example/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example/.well-known/openid-configuration/tenant1",
            "https://auth.example/tenant1/.well-known/openid-configuration"
        ]
    );
    assert_eq!(
        authorization_server_metadata_urls("https://auth.example/"),
        [
            "https://auth.example/.well-known/oauth-authorization-server",
            "https://auth.example/.well-known/openid-configuration"
        ]
    );
    assert!(check_endpoint_url("http://localhost:3000/x", "t").is_ok());
    assert!(check_endpoint_url("http://127.0.0.1/x", "t").is_ok());
    assert!(check_endpoint_url("http://[::1]:9/x", "t").is_ok());
    assert!(check_endpoint_url("http://auth.example/x", "t")
        .unwrap_err()
        .contains("https"));
    assert!(check_endpoint_url("http://127.0.0.1.evil.example/x", "t").is_err());
    assert!(check_endpoint_url("https://user@auth.example/x", "t").is_err());
    assert!(check_endpoint_url("ftp://auth.example/x", "t").is_err());
    assert_eq!(
        canonical_resource("HTTPS://MCP.Example:443/Mcp/#frag"),
        "https://mcp.example/Mcp"
    );
    assert_eq!(
        canonical_resource("https://mcp.example/"),
        "https://mcp.example"
    );
    assert!(resource_covers(
        "https://mcp.example/mcp",
        "https://mcp.example/mcp"
    ));
    assert!(resource_covers(
        "https://mcp.example",
        "https://mcp.example/mcp"
    ));
    assert!(!resource_covers(
        "https://mcp.example/mc",
        "https://mcp.example/mcp"
    ));
    assert!(!resource_covers(
        "https://other.example/mcp",
        "https://mcp.example/mcp"
    ));
}

#[test]
fn pkce_base64_and_forms() {
    // RFC 7636 appendix B.
    assert_eq!(
        pkce_challenge(VERIFIER),
        "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    );
    assert!(valid_verifier(VERIFIER));
    assert!(!valid_verifier("short"));
    assert!(!valid_verifier(&"a b".repeat(20)));
    assert_eq!(base64url(b""), "");
    assert_eq!(base64url(b"f"), "Zg");
    assert_eq!(base64url(b"fo"), "Zm8");
    assert_eq!(base64url(b"foo"), "Zm9v");
    assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    assert_eq!(base64_standard(b"fooba"), "Zm9vYmE=");
    assert_eq!(base64_standard(&[0xfb, 0xff]), "+/8=");
    assert_eq!(form_encode(&[("a b", "c&d=é")]), "a%20b=c%26d%3D%C3%A9");
    assert_eq!(
        query_param("https://x/cb?code=a%2Bb+c&state=s%3D1#f", "code").as_deref(),
        Some("a+b c")
    );
    assert_eq!(
        query_param("https://x/cb?code=1&state=s%3D1", "state").as_deref(),
        Some("s=1")
    );
    assert_eq!(query_param("https://x/cb?code=1", "state"), None);
    assert_eq!(
        query_param("https://x/cb?bad=%zz%4", "bad").as_deref(),
        Some("%zz%4")
    );
}

#[test]
fn scope_selection() {
    let supported = vec!["a".to_owned(), "b".to_owned()];
    assert_eq!(
        select_scope(Some("x"), Some(&supported), None).as_deref(),
        Some("x")
    );
    assert_eq!(
        select_scope(None, Some(&supported), None).as_deref(),
        Some("a b")
    );
    assert_eq!(select_scope(None, None, None), None);
    assert_eq!(select_scope(None, Some(&[]), None), None);
    assert_eq!(
        select_scope(Some("a c"), None, Some("a b")).as_deref(),
        Some("a b c")
    );
}

#[test]
fn token_responses_and_refresh_decisions() {
    let tokens = parse_token_response(
        200,
        r#"{"access_token":"at-1","token_type":"bearer","expires_in":3600,"refresh_token":"rt-1","scope":"a"}"#,
        1000.0,
    )
    .unwrap();
    assert_eq!(tokens.expires_at_ms, Some(3_601_000.0));
    assert_eq!(tokens.refresh_token.as_deref(), Some("rt-1"));
    assert!(
        parse_token_response(200, r#"{"access_token":"x","token_type":"mac"}"#, 0.0)
            .unwrap_err()
            .contains("Bearer")
    );
    assert!(parse_token_response(200, r#"{"token_type":"Bearer"}"#, 0.0).is_err());
    assert!(parse_token_response(200, "<html>", 0.0).is_err());
    assert_eq!(
        parse_token_response(
            400,
            r#"{"error":"invalid_grant","error_description":"expired"}"#,
            0.0
        )
        .unwrap_err(),
        "the token endpoint refused (400): invalid_grant: expired"
    );
    assert_eq!(
        parse_token_response(500, "oops", 0.0).unwrap_err(),
        "the token endpoint answered 500"
    );

    let mut record = record_with(tokens);
    assert_eq!(record.token_state(0.0), TokenState::Fresh);
    assert_eq!(record.token_state(3_560_000.0), TokenState::Refresh);
    let refresh = record.refresh_request().unwrap();
    assert!(refresh.body.contains("grant_type=refresh_token"));
    assert!(refresh.body.contains("refresh_token=rt-1"));
    assert!(refresh
        .body
        .contains("resource=https%3A%2F%2Fmcp.example%2Fmcp"));
    assert!(!refresh.url.contains("rt-1"));
    record
        .refreshed(
            200,
            r#"{"access_token":"at-2","token_type":"Bearer","expires_in":60}"#,
            5_000_000.0,
        )
        .unwrap();
    assert_eq!(record.tokens.access_token, "at-2");
    assert_eq!(record.tokens.refresh_token.as_deref(), Some("rt-1"), "kept");
    assert_eq!(record.bearer().1, "Bearer at-2");
    let refused = record
        .refreshed(
            400,
            r#"{"error":"invalid_grant","error_description":"rt-1 at-2 revoked"}"#,
            0.0,
        )
        .unwrap_err();
    assert!(
        !refused.contains("rt-1") && !refused.contains("at-2"),
        "{refused}"
    );
    record.tokens.refresh_token = None;
    assert_eq!(record.token_state(5_059_000.0), TokenState::Fresh);
    assert_eq!(record.token_state(5_061_000.0), TokenState::Expired);
    record.tokens.expires_at_ms = None;
    assert_eq!(record.token_state(f64::MAX), TokenState::Fresh);
}

fn record_with(tokens: Tokens) -> AuthRecord {
    AuthRecord {
        server_url: "https://mcp.example/mcp".into(),
        resource: "https://mcp.example/mcp".into(),
        issuer: "https://auth.example".into(),
        token_endpoint: "https://auth.example/token".into(),
        client: ClientCredentials {
            client_id: "c1".into(),
            client_secret: Some("client-secret-9".into()),
            auth_method: Some(TokenAuth::ClientSecretPost),
        },
        tokens,
        scope: None,
        obtained_ms: 0.0,
    }
}

#[test]
fn redaction() {
    let record = record_with(Tokens {
        access_token: "access-canary-0123456789abcdef".into(),
        refresh_token: Some("refresh-canary-42".into()),
        expires_at_ms: None,
        scope: None,
    });
    let text = "got access-canary-0123456789abcdef and refresh-canary-42 and client-secret-9, part: canary-01234567";
    let clean = record.redact(text);
    assert!(!clean.contains("access-canary"), "{clean}");
    assert!(!clean.contains("refresh-canary-42"));
    assert!(!clean.contains("client-secret-9"));
    assert!(!clean.contains("canary-01234567"), "a fragment: {clean}");
    let summary = record.summary(0.0).to_string();
    for secret in record.secrets() {
        assert!(!summary.contains(secret));
    }
    let stored = serde_json::to_value(&record).unwrap();
    assert_eq!(
        stored["tokens"]["accessToken"],
        "access-canary-0123456789abcdef"
    );
    let back: AuthRecord = serde_json::from_value(stored).unwrap();
    assert_eq!(back, record);
}

const PRM: &str = r#"{"resource":"http://localhost:3000/mcp","authorization_servers":["http://localhost:4000/tenant1"],"scopes_supported":["mcp:a","mcp:b"]}"#;

fn as_metadata(extra: Value) -> String {
    let mut m = json!({
        "issuer": "http://localhost:4000/tenant1",
        "authorization_endpoint": "http://localhost:4000/tenant1/authorize",
        "token_endpoint": "http://localhost:4000/tenant1/token",
        "registration_endpoint": "http://localhost:4000/tenant1/register",
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    });
    for (k, v) in extra.as_object().unwrap() {
        if v.is_null() {
            m.as_object_mut().unwrap().remove(k);
        } else {
            m[k] = v.clone();
        }
    }
    m.to_string()
}

fn config(challenge: &str) -> FlowConfig {
    FlowConfig {
        server_url: "http://localhost:3000/mcp".into(),
        redirect_uri: "http://127.0.0.1:9999/callback".into(),
        client_name: "webmcp-host".into(),
        challenge: BearerChallenge::from_header(Some(challenge)),
        ..FlowConfig::default()
    }
}

#[test]
fn a_whole_flow_with_dynamic_registration() {
    let mut flow = Flow::new(
        config(
            r#"Bearer error="invalid_token", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp""#,
        ),
        secrets(),
    );
    let prm = fetch(&flow);
    assert_eq!(
        prm.url,
        "http://localhost:3000/.well-known/oauth-protected-resource/mcp"
    );
    assert_eq!(header(&prm, "mcp-protocol-version"), Some(LATEST_PROTOCOL));
    flow.response(200, PRM, 0.0);
    // The path-inserted OAuth form 404s, then the OpenID one answers.
    assert_eq!(
        fetch(&flow).url,
        "http://localhost:4000/.well-known/oauth-authorization-server/tenant1"
    );
    flow.response(404, "Not Found", 0.0);
    assert_eq!(
        fetch(&flow).url,
        "http://localhost:4000/.well-known/openid-configuration/tenant1"
    );
    flow.response(200, &as_metadata(json!({})), 0.0);
    let register = fetch(&flow);
    assert_eq!(register.url, "http://localhost:4000/tenant1/register");
    let body: Value = serde_json::from_str(&register.body).unwrap();
    assert_eq!(
        body["redirect_uris"],
        json!(["http://127.0.0.1:9999/callback"])
    );
    assert_eq!(body["token_endpoint_auth_method"], "none");
    assert_eq!(body["application_type"], "native");
    flow.response(201, r#"{"client_id":"dyn-1"}"#, 0.0);
    let Step::Authorize { url } = flow.step() else {
        panic!("{:?}", flow.step())
    };
    assert!(url.starts_with("http://localhost:4000/tenant1/authorize?response_type=code&"));
    assert_eq!(query_param(&url, "client_id").as_deref(), Some("dyn-1"));
    assert_eq!(
        query_param(&url, "code_challenge_method").as_deref(),
        Some("S256")
    );
    assert_eq!(
        query_param(&url, "code_challenge").as_deref(),
        Some("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    );
    assert_eq!(
        query_param(&url, "resource").as_deref(),
        Some("http://localhost:3000/mcp")
    );
    assert_eq!(query_param(&url, "scope").as_deref(), Some("mcp:a mcp:b"));
    assert_eq!(
        query_param(&url, "state").as_deref(),
        Some("state-0123456789")
    );
    assert!(!url.contains(VERIFIER));

    // A forged answer with another state is refused.
    let mut forged = flow.clone();
    forged.redirected("http://127.0.0.1:9999/callback?code=x&state=other");
    assert!(matches!(forged.step(), Step::Failed(m) if m.contains("state")));
    // RFC 9207: an answer naming another issuer is refused; one naming this issuer is taken.
    let mut mixed_up = flow.clone();
    mixed_up.redirected("http://127.0.0.1:9999/callback?code=x&state=state-0123456789&iss=https%3A%2F%2Fevil.example");
    assert!(
        matches!(mixed_up.step(), Step::Failed(m) if m.contains("another issuer (iss `https://evil.example`"))
    );
    let mut named = flow.clone();
    named.redirected("http://127.0.0.1:9999/callback?code=x&state=state-0123456789&iss=http%3A%2F%2Flocalhost%3A4000%2Ftenant1");
    assert!(matches!(named.step(), Step::Fetch(r) if r.url.ends_with("/token")));
    let mut denied = flow.clone();
    denied.redirected("http://127.0.0.1:9999/callback?error=access_denied&state=state-0123456789");
    assert!(matches!(denied.step(), Step::Failed(m) if m.contains("access_denied")));

    flow.redirected("http://127.0.0.1:9999/callback?code=the-code&state=state-0123456789");
    let token = fetch(&flow);
    assert_eq!(token.url, "http://localhost:4000/tenant1/token");
    assert_eq!(header(&token, "authorization"), None);
    for part in [
        "grant_type=authorization_code",
        "code=the-code",
        &format!("code_verifier={VERIFIER}"),
        "resource=http%3A%2F%2Flocalhost%3A3000%2Fmcp",
        "client_id=dyn-1",
        "redirect_uri=http%3A%2F%2F127.0.0.1%3A9999%2Fcallback",
    ] {
        assert!(token.body.contains(part), "{part} in {}", token.body);
    }
    flow.response(
        200,
        r#"{"access_token":"tok","token_type":"Bearer","expires_in":10}"#,
        100.0,
    );
    let Step::Done(record) = flow.step() else {
        panic!("{:?}", flow.step())
    };
    assert_eq!(record.tokens.expires_at_ms, Some(10_100.0));
    assert_eq!(record.issuer, "http://localhost:4000/tenant1");
    assert_eq!(record.client.auth_method, Some(TokenAuth::None));
}

#[test]
fn discovery_falls_back_and_refuses() {
    // No header: path-based, then root; then the server's origin as the authorization
    // server (2025-03-26).
    let mut flow = Flow::new(config("Bearer"), secrets());
    assert_eq!(
        fetch(&flow).url,
        "http://localhost:3000/.well-known/oauth-protected-resource/mcp"
    );
    flow.response(404, "", 0.0);
    assert_eq!(
        fetch(&flow).url,
        "http://localhost:3000/.well-known/oauth-protected-resource"
    );
    flow.response(0, "connection refused", 0.0);
    assert_eq!(
        fetch(&flow).url,
        "http://localhost:3000/.well-known/oauth-authorization-server"
    );
    flow.response(404, "", 0.0);
    flow.response(404, "", 0.0);
    assert!(
        matches!(flow.step(), Step::Failed(m) if m.contains("no authorization server metadata"))
    );

    // A server without S256 is refused.
    let mut flow = Flow::new(config("Bearer"), secrets());
    flow.response(200, PRM, 0.0);
    flow.response(
        200,
        &as_metadata(json!({"code_challenge_methods_supported": ["plain"]})),
        0.0,
    );
    assert!(matches!(flow.step(), Step::Failed(m) if m.contains("S256")));
    let mut flow = Flow::new(config("Bearer"), secrets());
    flow.response(200, PRM, 0.0);
    flow.response(
        200,
        &as_metadata(json!({"code_challenge_methods_supported": null})),
        0.0,
    );
    assert!(matches!(flow.step(), Step::Failed(m) if m.contains("S256")));

    // Plain http off loopback is refused, in metadata and in headers.
    let mut flow = Flow::new(config("Bearer"), secrets());
    flow.response(200, PRM, 0.0);
    flow.response(
        200,
        &as_metadata(json!({"token_endpoint": "http://auth.example/token"})),
        0.0,
    );
    assert!(matches!(flow.step(), Step::Failed(m) if m.contains("https")));
    let flow = Flow::new(
        config(r#"Bearer resource_metadata="http://evil.example/prm""#),
        secrets(),
    );
    assert_eq!(
        fetch(&flow).url,
        "http://localhost:3000/.well-known/oauth-protected-resource/mcp",
        "an http header URL off loopback is ignored"
    );

    // A resource for another server is refused.
    let mut flow = Flow::new(config("Bearer"), secrets());
    flow.response(
        200,
        r#"{"resource":"http://localhost:3001/mcp","authorization_servers":["http://localhost:4000"]}"#,
        0.0,
    );
    assert!(matches!(flow.step(), Step::Failed(m) if m.contains("not for this server")));

    // A wrong issuer is refused.
    let mut flow = Flow::new(config("Bearer"), secrets());
    flow.response(200, PRM, 0.0);
    flow.response(
        200,
        &as_metadata(json!({"issuer": "http://localhost:4000/other"})),
        0.0,
    );
    assert!(matches!(flow.step(), Step::Failed(m) if m.contains("issuer")));
    // Identical, not normalized: a trailing slash the identifier did not have is another issuer.
    let mut flow = Flow::new(config("Bearer"), secrets());
    flow.response(200, PRM, 0.0);
    flow.response(
        200,
        &as_metadata(json!({"issuer": "http://localhost:4000/tenant1/"})),
        0.0,
    );
    assert!(matches!(flow.step(), Step::Failed(m) if m.contains("issuer")));

    // No registration endpoint and no client id: a clear message.
    let mut flow = Flow::new(config("Bearer"), secrets());
    flow.response(200, PRM, 0.0);
    flow.response(
        200,
        &as_metadata(json!({"registration_endpoint": null})),
        0.0,
    );
    assert!(matches!(flow.step(), Step::Failed(m) if m.contains("client id")));

    // Malformed random values never start a flow.
    let flow = Flow::new(
        config("Bearer"),
        FlowSecrets {
            verifier: "x".into(),
            state: "s".into(),
        },
    );
    assert!(matches!(flow.step(), Step::Failed(_)));
}

#[test]
fn clients_in_order_and_token_auth_methods() {
    // Pre-registered first, with the method the server supports.
    let mut c = config(r#"Bearer scope="mcp:x""#);
    c.preregistered = Some(ClientCredentials {
        client_id: "pre".into(),
        client_secret: Some("pre-secret".into()),
        auth_method: None,
    });
    c.metadata_document = Some("https://client.example/meta.json".into());
    let mut flow = Flow::new(c, secrets());
    flow.response(200, PRM, 0.0);
    flow.response(
        200,
        &as_metadata(json!({"token_endpoint_auth_methods_supported": ["client_secret_basic"], "client_id_metadata_document_supported": true})),
        0.0,
    );
    let Step::Authorize { url } = flow.step() else {
        panic!()
    };
    assert_eq!(query_param(&url, "client_id").as_deref(), Some("pre"));
    assert_eq!(
        query_param(&url, "scope").as_deref(),
        Some("mcp:x"),
        "the challenge's scope"
    );
    flow.redirected("http://127.0.0.1:9999/callback?code=c&state=state-0123456789");
    let token = fetch(&flow);
    assert_eq!(
        header(&token, "authorization"),
        Some(format!("Basic {}", base64_standard(b"pre:pre-secret")).as_str())
    );
    assert!(!token.body.contains("pre-secret"));
    let mut failing = flow.clone();
    failing.response(
        401,
        r#"{"error":"invalid_client","error_description":"pre-secret is wrong"}"#,
        0.0,
    );
    assert!(
        matches!(failing.step(), Step::Failed(m) if !m.contains("pre-secret") && m.contains("invalid_client"))
    );

    // Then a client ID metadata document where supported.
    let mut c = config("Bearer");
    c.metadata_document = Some("https://client.example/meta.json".into());
    let mut flow = Flow::new(c, secrets());
    flow.response(200, PRM, 0.0);
    flow.response(
        200,
        &as_metadata(json!({"client_id_metadata_document_supported": true})),
        0.0,
    );
    let Step::Authorize { url } = flow.step() else {
        panic!()
    };
    assert_eq!(
        query_param(&url, "client_id").as_deref(),
        Some("https://client.example/meta.json")
    );

    // Then dynamic registration; the answer's method (with a secret) is used.
    for (method, basic) in [("client_secret_basic", true), ("client_secret_post", false)] {
        let mut flow = Flow::new(config("Bearer"), secrets());
        flow.response(200, PRM, 0.0);
        flow.response(
            200,
            &as_metadata(json!({"token_endpoint_auth_methods_supported": [method]})),
            0.0,
        );
        let register: Value = serde_json::from_str(&fetch(&flow).body).unwrap();
        assert_eq!(register["token_endpoint_auth_method"], method);
        flow.response(
            201,
            &json!({"client_id": "d", "client_secret": "dyn-secret", "token_endpoint_auth_method": method}).to_string(),
            0.0,
        );
        flow.redirected("http://127.0.0.1:9999/callback?code=c&state=state-0123456789");
        let token = fetch(&flow);
        assert_eq!(header(&token, "authorization").is_some(), basic);
        assert_eq!(token.body.contains("client_secret=dyn-secret"), !basic);
    }

    // A step-up keeps the client and the scope granted before.
    let previous = AuthRecord {
        issuer: "http://localhost:4000/tenant1".into(),
        scope: Some("mcp:basic".into()),
        ..record_with(Tokens {
            access_token: "old".into(),
            refresh_token: None,
            expires_at_ms: None,
            scope: Some("mcp:basic".into()),
        })
    };
    let mut c = config(r#"Bearer error="insufficient_scope", scope="mcp:write""#);
    c.previous = Some(previous);
    let mut flow = Flow::new(c, secrets());
    flow.response(200, PRM, 0.0);
    flow.response(200, &as_metadata(json!({})), 0.0);
    let Step::Authorize { url } = flow.step() else {
        panic!()
    };
    assert_eq!(query_param(&url, "client_id").as_deref(), Some("c1"));
    assert_eq!(
        query_param(&url, "scope").as_deref(),
        Some("mcp:basic mcp:write")
    );

    // A client registered with another issuer (even one that differs by a trailing slash) is
    // not reused: the client registers anew with this one.
    let elsewhere = AuthRecord {
        issuer: "http://localhost:4000/tenant1/".into(),
        ..record_with(Tokens {
            access_token: "old".into(),
            refresh_token: None,
            expires_at_ms: None,
            scope: None,
        })
    };
    let mut c = config("Bearer");
    c.previous = Some(elsewhere);
    let mut flow = Flow::new(c, secrets());
    flow.response(200, PRM, 0.0);
    flow.response(200, &as_metadata(json!({})), 0.0);
    assert_eq!(fetch(&flow).url, "http://localhost:4000/tenant1/register");
}

#[test]
fn no_scope_when_nothing_names_one() {
    let mut flow = Flow::new(config("Bearer"), secrets());
    flow.response(
        200,
        r#"{"resource":"http://localhost:3000/mcp","authorization_servers":["http://localhost:4000/tenant1"]}"#,
        0.0,
    );
    flow.response(
        200,
        &as_metadata(json!({"scopes_supported": ["as-only"]})),
        0.0,
    );
    flow.response(201, r#"{"client_id":"d"}"#, 0.0);
    let Step::Authorize { url } = flow.step() else {
        panic!()
    };
    assert_eq!(query_param(&url, "scope"), None);
}

#[test]
fn the_loopback_listener_reads_the_callback() {
    let uri = "http://127.0.0.1:4321/callback";
    assert_eq!(
        loopback_redirect("GET /callback?code=c&state=s HTTP/1.1\r\nhost: x\r\n", uri),
        Some("http://127.0.0.1:4321/callback?code=c&state=s".into())
    );
    assert_eq!(
        loopback_redirect("GET /favicon.ico HTTP/1.1\r\n", uri),
        None
    );
    assert_eq!(loopback_redirect("", uri), None);
    assert!(loopback_response().starts_with("HTTP/1.1 200 OK\r\n"));
}

#[test]
fn an_answer_without_the_issuer_it_promised_is_refused() {
    let mut flow = Flow::new(config(r#"Bearer scope="mcp:x""#), secrets());
    flow.response(200, PRM, 0.0);
    let promised = json!({"authorization_response_iss_parameter_supported": true});
    flow.response(200, &as_metadata(promised), 0.0);
    flow.response(201, r#"{"client_id":"dyn-1"}"#, 0.0);
    assert!(
        matches!(flow.step(), Step::Authorize { .. }),
        "{:?}",
        flow.step()
    );
    let mut silent = flow.clone();
    silent.redirected("http://127.0.0.1:9999/callback?code=c&state=state-0123456789");
    assert!(matches!(silent.step(), Step::Failed(m) if m.contains("does not name its issuer")));
    flow.redirected("http://127.0.0.1:9999/callback?code=c&state=state-0123456789&iss=http://localhost:4000/tenant1");
    assert!(matches!(flow.step(), Step::Fetch(r) if r.url.ends_with("/token")));
}

#[test]
fn registration_names_the_application_type_by_redirect() {
    use crate::core::mcp::auth::application_type;
    assert_eq!(application_type("http://127.0.0.1:9999/callback"), "native");
    assert_eq!(application_type("http://localhost:8080/cb"), "native");
    assert_eq!(application_type("http://[::1]/cb"), "native");
    assert_eq!(
        application_type("https://abcdef.chromiumapp.org/mcp"),
        "web"
    );
    assert_eq!(application_type("http://127.0.0.1.evil.example/cb"), "web");
    assert_eq!(application_type("http://localhost.evil.example/cb"), "web");
}

mod signin;
