//! OTLP protobuf: spans encoded as an `ExportTraceServiceRequest`
//! (`opentelemetry/proto/collector/trace/v1`), the body of `POST /v1/traces` with
//! `content-type: application/x-protobuf`. Hand-written: only the messages and fields below.
//!
//! ```text
//! ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
//! ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
//! Resource { repeated KeyValue attributes = 1; }
//! ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
//! InstrumentationScope { string name = 1; string version = 2; }
//! Span { bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5;
//!        SpanKind kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
//!        repeated KeyValue attributes = 9; Status status = 15; }
//! Status { string message = 2; StatusCode code = 3; }
//! KeyValue { string key = 1; AnyValue value = 2; }
//! AnyValue { string string_value = 1; bool bool_value = 2; int64 int_value = 3;
//!            double double_value = 4; ArrayValue array_value = 5; }
//! ArrayValue { repeated AnyValue values = 1; }
//! ```

/// An attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// A string.
    Str(String),
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Double(f64),
    /// An array of strings.
    Strs(Vec<String>),
}

/// A span's kind (`SpanKind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// `SPAN_KIND_INTERNAL`.
    Internal = 1,
    /// `SPAN_KIND_CLIENT`: a call to another service (a model, a tool).
    Client = 3,
}

/// One span.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// The trace (16 bytes).
    pub trace_id: [u8; 16],
    /// This span (8 bytes).
    pub span_id: [u8; 8],
    /// The parent span; `None` for the root.
    pub parent_span_id: Option<[u8; 8]>,
    /// The span's name.
    pub name: String,
    /// Its kind.
    pub kind: SpanKind,
    /// Start, in nanoseconds since the epoch.
    pub start_ns: u64,
    /// End, in nanoseconds since the epoch.
    pub end_ns: u64,
    /// Its attributes, in order.
    pub attributes: Vec<(String, AttrValue)>,
    /// An error status and its message (`None`: unset).
    pub error: Option<String>,
}

impl Span {
    /// Sets an attribute (replacing one of the same key).
    pub fn set(&mut self, key: &str, value: AttrValue) {
        match self.attributes.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value,
            None => self.attributes.push((key.to_owned(), value)),
        }
    }

    /// An attribute's value.
    pub fn get(&self, key: &str) -> Option<&AttrValue> {
        self.attributes
            .iter()
            .find_map(|(k, v)| (k == key).then_some(v))
    }
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, (u64::from(field) << 3) | u64::from(wire));
}

fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    tag(out, field, 2);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

fn message(out: &mut Vec<u8>, field: u32, write: impl FnOnce(&mut Vec<u8>)) {
    let mut inner = Vec::new();
    write(&mut inner);
    bytes(out, field, &inner);
}

fn fixed64(out: &mut Vec<u8>, field: u32, value: u64) {
    tag(out, field, 1);
    out.extend_from_slice(&value.to_le_bytes());
}

fn any_value(out: &mut Vec<u8>, value: &AttrValue) {
    match value {
        AttrValue::Str(s) => bytes(out, 1, s.as_bytes()),
        AttrValue::Bool(b) => {
            tag(out, 2, 0);
            varint(out, u64::from(*b));
        }
        AttrValue::Int(i) => {
            tag(out, 3, 0);
            varint(out, *i as u64);
        }
        AttrValue::Double(d) => fixed64(out, 4, d.to_bits()),
        AttrValue::Strs(items) => message(out, 5, |array| {
            for item in items {
                message(array, 1, |v| bytes(v, 1, item.as_bytes()));
            }
        }),
    }
}

fn key_values(out: &mut Vec<u8>, field: u32, attributes: &[(String, AttrValue)]) {
    for (key, value) in attributes {
        message(out, field, |kv| {
            bytes(kv, 1, key.as_bytes());
            message(kv, 2, |v| any_value(v, value));
        });
    }
}

fn span(out: &mut Vec<u8>, span: &Span) {
    bytes(out, 1, &span.trace_id);
    bytes(out, 2, &span.span_id);
    if let Some(parent) = &span.parent_span_id {
        bytes(out, 4, parent);
    }
    bytes(out, 5, span.name.as_bytes());
    tag(out, 6, 0);
    varint(out, span.kind as u64);
    fixed64(out, 7, span.start_ns);
    fixed64(out, 8, span.end_ns.max(span.start_ns));
    key_values(out, 9, &span.attributes);
    message(out, 15, |status| match &span.error {
        Some(text) => {
            bytes(status, 2, text.as_bytes());
            tag(status, 3, 0);
            varint(status, 2); // STATUS_CODE_ERROR
        }
        None => {
            tag(status, 3, 0);
            varint(status, 1); // STATUS_CODE_OK
        }
    });
}

/// The `ExportTraceServiceRequest` of `spans`, from one resource (its attributes, e.g.
/// `service.name`) and one instrumentation scope.
pub fn export_request(
    resource: &[(String, AttrValue)],
    scope: (&str, &str),
    spans: &[Span],
) -> Vec<u8> {
    let mut out = Vec::new();
    message(&mut out, 1, |resource_spans| {
        message(resource_spans, 1, |r| key_values(r, 1, resource));
        message(resource_spans, 2, |scope_spans| {
            message(scope_spans, 1, |s| {
                bytes(s, 1, scope.0.as_bytes());
                bytes(s, 2, scope.1.as_bytes());
            });
            for one in spans {
                message(scope_spans, 2, |s| span(s, one));
            }
        });
    });
    out
}
