//! A `tools/call`'s arguments, read once. The front parses a call's
//! `params.arguments` object straight into the JSON tree the tool works on
//! and hands rmcp the message with `{}` in its place; the handler takes the
//! tree back from the request's extensions.
//!
//! Why: rmcp reads a message through serde's untagged and method-tagged
//! enums, which buffer the whole message as an intermediate tree before
//! building the final one (and revision 2026-07-28's header check turns the
//! message back into a third). For a large program that was four times the
//! memory of the one tree the tool needs (docs/performance.md, the memory
//! row). Everything rmcp checks besides the arguments (the envelope, the
//! method, the tool name, the protocol headers) still reaches it unchanged;
//! it never looked inside an object of arguments, which the tools' own
//! argument schemas check.
//!
//! The text the arguments were read from stays with them ([`Received`]): a
//! verdict is keyed by its program's text as it arrived, so a program is
//! not written out again to be hashed. A plain call's arguments (see
//! [`PlainCall`]) are not read into a tree here at all: the handler reads
//! them when it needs them, and a validate call whose program's text has a
//! verdict never needs them (`mcp::tools::validate::from_text`).

use axum::body::Bytes;
use serde::Deserialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// The arguments the front lifted out of a request it hands to rmcp, for
/// the handler to take (once) from the request's extensions.
#[derive(Clone, Default)]
pub struct LiftedArguments(Arc<Mutex<Option<ArgumentsAndText>>>);

/// A call's lifted arguments (unless they are still to be read) and the
/// text they were, or are to be, read from.
pub type ArgumentsAndText = (Option<Map<String, Value>>, Received);

impl LiftedArguments {
    pub fn new(arguments: Option<Map<String, Value>>, received: Received) -> Self {
        Self(Arc::new(Mutex::new(Some((arguments, received)))))
    }

    /// The arguments and their text, the first time it is asked.
    pub fn take(&self) -> Option<ArgumentsAndText> {
        self.0.lock().ok()?.take()
    }
}

/// The text of a call's arguments object as it arrived: a slice of the
/// request's body, not a copy. The lifted tree was read from exactly this
/// text, so equal texts mean equal arguments.
#[derive(Clone, Debug)]
pub struct Received(Bytes);

impl Received {
    /// The arguments read into a tree. Text that cannot be (nested past the
    /// parser's 128 levels, a number out of range) is the parse error the
    /// whole message would have been.
    pub fn read(&self) -> Result<Map<String, Value>, rmcp::ErrorData> {
        serde_json::from_slice(&self.0).map_err(|e| {
            rmcp::ErrorData::parse_error(format!("the call's arguments cannot be read: {e}"), None)
        })
    }

    /// The text of member `name` as it arrived, when the object has exactly
    /// one such member.
    pub fn member(&self, name: &str) -> Option<&RawValue> {
        let members: Members = serde_json::from_slice(&self.0).ok()?;
        members.only(name)
    }

    /// The texts of `program` (present once) and `context` (at most once)
    /// when the object has no other member.
    pub fn program_and_context(&self, program: &str) -> Option<(&RawValue, Option<&RawValue>)> {
        let members: Members = serde_json::from_slice(&self.0).ok()?;
        let mut contexts = 0;
        for (name, _) in &members.0 {
            match &*name.0 {
                "context" => contexts += 1,
                other if other == program => {}
                _ => return None,
            }
        }
        let context = match contexts {
            0 => None,
            _ => Some(members.only("context")?),
        };
        Some((members.only(program)?, context))
    }
}

/// A message whose arguments were lifted: the body rmcp gets and the
/// arguments for the handler.
pub struct Lifted {
    pub body: Bytes,
    /// The arguments read into a tree; `None` for a plain call, whose
    /// handler reads `received` when it needs to.
    pub arguments: Option<Map<String, Value>>,
    /// The text the arguments are read from.
    pub received: Received,
    /// Set when the message is a plain call (see [`PlainCall`]).
    pub plain: Option<PlainCall>,
}

/// A `tools/call` with nothing but `jsonrpc` ("2.0"), `id`, `method` and
/// `params`, whose params are nothing but `name` and the lifted
/// `arguments`: what nearly every agent sends. Its id and name are read
/// with rmcp's own types, so the front can answer it without reading the
/// message a second time through rmcp's message enums (the largest part of
/// a small call's parsing). A message with any other member (`_meta`, a
/// task, a duplicate) is not plain and is read by rmcp as before.
pub struct PlainCall {
    pub id: rmcp::model::RequestId,
    pub name: String,
}

/// Lifts the arguments out of `body` when it is one JSON-RPC `tools/call`
/// object whose `params` has exactly one `arguments` member and it is a JSON
/// object. Anything else (another method, a duplicate member, arguments of
/// another type, a body that is not JSON) is left for rmcp to read and
/// answer as before: `None`. A plain call's arguments are left as text; any
/// other call's are read here, and when they cannot be the message is left
/// for rmcp as well.
pub fn lift(body: &Bytes) -> Option<Lifted> {
    let top: Members = serde_json::from_slice(body).ok()?;
    let method = top.only("method")?;
    if serde_json::from_str::<&str>(method.get()).ok()? != "tools/call" {
        return None;
    }
    let params: Members = serde_json::from_str(top.only("params")?.get()).ok()?;
    let raw = params.only("arguments")?;
    if !raw.get().starts_with('{') {
        return None;
    }
    let plain = plain_call(&top, &params);
    let arguments = match plain {
        Some(_) => None,
        None => Some(serde_json::from_str::<Map<String, Value>>(raw.get()).ok()?),
    };
    // Where the arguments' text sits in the body: it was borrowed from it.
    let start = (raw.get().as_ptr() as usize).checked_sub(body.as_ptr() as usize)?;
    let end = start.checked_add(raw.get().len())?;
    if end > body.len() {
        return None;
    }
    let mut small = Vec::with_capacity(body.len() - (end - start) + 2);
    small.extend_from_slice(&body[..start]);
    small.extend_from_slice(b"{}");
    small.extend_from_slice(&body[end..]);
    Some(Lifted {
        body: Bytes::from(small),
        arguments,
        received: Received(body.slice(start..end)),
        plain,
    })
}

/// The call's id and tool name when `top` and `params` (a `tools/call`
/// whose `arguments` is an object, already checked) have no other members.
fn plain_call(top: &Members, params: &Members) -> Option<PlainCall> {
    let only = |members: &Members, names: &[&str]| {
        members.0.len() == names.len() && names.iter().all(|n| members.only(n).is_some())
    };
    if !only(top, &["jsonrpc", "id", "method", "params"]) || !only(params, &["name", "arguments"]) {
        return None;
    }
    serde_json::from_str::<rmcp::model::JsonRpcVersion2_0>(top.only("jsonrpc")?.get()).ok()?;
    Some(PlainCall {
        id: serde_json::from_str(top.only("id")?.get()).ok()?,
        name: serde_json::from_str(params.only("name")?.get()).ok()?,
    })
}

/// A JSON object's members in order, duplicates kept, each value left as
/// its text and each name borrowed from the input unless it has escapes
/// (nothing built).
struct Members<'a>(Vec<(Name<'a>, &'a RawValue)>);

/// A member's name: borrowed from the input when it has no escapes.
struct Name<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Name<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct NameVisitor;
        impl<'de> Visitor<'de> for NameVisitor {
            type Value = Name<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Name<'de>, E> {
                Ok(Name(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(NameVisitor)
    }
}

impl<'a> Members<'a> {
    /// The value of `name` when the object has exactly one such member.
    fn only(&self, name: &str) -> Option<&'a RawValue> {
        let mut found = self.0.iter().filter(|(k, _)| k.0 == name).map(|(_, v)| *v);
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectVisitor;
        impl<'de> Visitor<'de> for ObjectVisitor {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members<'de>, A::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry::<Name<'de>, &'de RawValue>()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(ObjectVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The body rmcp gets and the arguments, read here or (a plain call)
    /// from their text.
    fn lifted(body: &str) -> Option<(String, Value)> {
        let l = lift(&Bytes::from(body.to_string()))?;
        let arguments = match l.arguments {
            Some(read) => read,
            None => l.received.read().expect("readable"),
        };
        Some((
            String::from_utf8(l.body.to_vec()).unwrap(),
            Value::Object(arguments),
        ))
    }

    #[test]
    fn a_calls_arguments_are_lifted_and_the_rest_is_kept_byte_for_byte() {
        let body = r#"{"jsonrpc":"2.0", "id":7,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,{"b":"\u00e9"}]},"_meta":{}}}"#;
        let (small, args) = lifted(body).unwrap();
        assert_eq!(
            small,
            r#"{"jsonrpc":"2.0", "id":7,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{}}}"#
        );
        assert_eq!(args, json!({"a": [1, {"b": "é"}]}));
    }

    #[test]
    fn a_members_text_is_kept_as_it_arrived() {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"p": {"b" : 1, "a":[ 2 ]},"q":"\u00e9","d":1,"d":2}}}"#;
        let received = lift(&Bytes::from(body.to_string()))
            .expect("lifted")
            .received;
        assert_eq!(
            received.member("p").map(RawValue::get),
            Some(r#"{"b" : 1, "a":[ 2 ]}"#)
        );
        assert_eq!(received.member("q").map(RawValue::get), Some(r#""\u00e9""#));
        // A duplicated member has no one text; neither has a missing one.
        assert!(received.member("d").is_none());
        assert!(received.member("x").is_none());
    }

    #[test]
    fn member_names_with_escapes_are_read_as_their_text() {
        let body = r#"{"jsonrpc":"2.0","id":1,"\u006dethod":"tools/call","params":{"name":"t","arguments":{"x":1}}}"#;
        let l = lift(&Bytes::from(body.to_string())).expect("lifted");
        assert_eq!(l.plain.expect("plain").name, "t");
        assert_eq!(Value::Object(l.received.read().unwrap()), json!({"x": 1}));
    }

    #[test]
    fn a_plain_calls_arguments_are_left_as_text_and_any_others_are_read() {
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let plain = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{{"p":{deep}}}}}}}"#
        );
        let l = lift(&Bytes::from(plain)).expect("a plain call is lifted unread");
        assert!(l.plain.is_some() && l.arguments.is_none());
        // Read when needed, its text is the parse error the message was.
        let e = l.received.read().unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::PARSE_ERROR);
        assert!(e.message.contains("recursion limit"), "{}", e.message);
        let other = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":1},"_meta":{}}}"#;
        let l = lift(&Bytes::from_static(other.as_bytes())).expect("lifted");
        assert_eq!(l.arguments.map(Value::Object), Some(json!({"x": 1})));
        let unreadable = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{{"p":{deep}}},"_meta":{{}}}}}}"#
        );
        assert!(lift(&Bytes::from(unreadable)).is_none(), "left for rmcp");
    }

    #[test]
    fn a_program_and_its_context_are_found_alone() {
        let text = |arguments: &str| {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"t","arguments":{arguments}}}}}"#
            );
            lift(&Bytes::from(body)).expect("lifted").received
        };
        let found = |arguments: &str| {
            text(arguments)
                .program_and_context("w")
                .map(|(p, c)| (p.get().to_string(), c.map(|c| c.get().to_string())))
        };
        assert_eq!(
            found(r#"{"w": {"a":1}}"#),
            Some((r#"{"a":1}"#.into(), None))
        );
        assert_eq!(
            found(r#"{"context":{"k":2},"w":[ ]}"#),
            Some(("[ ]".into(), Some(r#"{"k":2}"#.into())))
        );
        for alone_or_not in [
            r#"{"w": {}, "x": 1}"#,
            r#"{"w": {}, "w": {}}"#,
            r#"{"w": {}, "context": {}, "context": {}}"#,
            r#"{"context": {}}"#,
            r#"{}"#,
        ] {
            assert_eq!(found(alone_or_not), None, "{alone_or_not}");
        }
    }

    #[test]
    fn the_arguments_are_taken_once() {
        let l = lift(&Bytes::from_static(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":1}}}"#,
        ))
        .unwrap();
        let lifted = LiftedArguments::new(l.arguments, l.received);
        let shared = lifted.clone();
        let (arguments, received) = shared.take().expect("taken once");
        assert!(
            arguments.is_none(),
            "a plain call's are read by the handler"
        );
        assert_eq!(Value::Object(received.read().unwrap()), json!({"x": 1}));
        assert_eq!(received.member("x").map(RawValue::get), Some("1"));
        assert!(lifted.take().is_none());
    }

    fn plain(body: &str) -> Option<(rmcp::model::RequestId, String)> {
        let call = lift(&Bytes::from(body.to_string()))?.plain?;
        Some((call.id, call.name))
    }

    #[test]
    fn a_call_with_nothing_else_is_plain_and_read_with_rmcps_types() {
        use rmcp::model::NumberOrString;
        let (id, name) = plain(
            r#"{"params":{"arguments":{"x":1},"name":"pilotage_manifest"},"id":"a-1","method":"tools/call","jsonrpc":"2.0"}"#,
        )
        .unwrap();
        assert_eq!(id, NumberOrString::String("a-1".into()));
        assert_eq!(name, "pilotage_manifest");
        // rmcp reads `7.0` as the integer 7; so does the plain path.
        let (id, _) =
            plain(r#"{"jsonrpc":"2.0","id":7.0,"method":"tools/call","params":{"name":"t","arguments":{}}}"#)
                .unwrap();
        assert_eq!(id, NumberOrString::Number(7));
    }

    #[test]
    fn a_call_with_anything_more_or_amiss_is_left_for_rmcp_to_read() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"_meta":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}},"x":1}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
        ] {
            assert!(lift(&Bytes::from(body.to_string())).is_some(), "{body}");
            assert!(plain(body).is_none(), "{body}");
        }
    }

    #[test]
    fn everything_else_is_left_for_rmcp() {
        for body in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"arguments":{"x":1}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{},"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/call","params":{"arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":1}}} x"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"x":1}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7,"params":{"arguments":{}}}"#,
            "not json",
        ] {
            assert!(lifted(body).is_none(), "{body}");
        }
    }
}
