//! Schema documents as text: their nesting measured before they are read (a document
//! nested deeper than `Limits::max_schema_document_depth` is refused without being
//! parsed), then read with numbers kept exactly as written.

use serde::Deserialize;
use serde_json::Value;

use super::numbers::Decimal;
use crate::error::{Error, Result};

/// How deep the arrays and objects of JSON `text` nest, and the byte offset where the
/// deepest one opens (strings skipped; the text need not be valid JSON).
pub fn nesting(text: &str) -> (usize, usize) {
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    let mut in_string = false;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > deepest {
                    (deepest, at) = (depth, i);
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    (deepest, at)
}

/// Reads JSON `text` (`what` names it in errors). Text nested deeper than `max_depth` is
/// refused before it is read (the reader recurses once per level: the caller's stack
/// must hold `max_depth` levels, see [`super::compile::STACK_PER_LEVEL`]); the document
/// depth limit itself is checked on the value, where its error has a JSON pointer.
/// `limit` is the value of `Limits::max_schema_document_depth` the error names.
pub fn parse(text: &str, what: &str, max_depth: usize, limit: usize) -> Result<Value> {
    let (depth, at) = nesting(text);
    if depth > max_depth + 1 {
        return Err(Error::LimitExceeded {
            limit: "max_schema_document_depth",
            value: limit,
            context: format!("{what}: JSON values nest {} deep (at byte {at})", depth - 1),
        });
    }
    let mut de = serde_json::Deserializer::from_str(text);
    // The depth is bounded above: serde_json's own bound (128) would refuse valid schemas.
    de.disable_recursion_limit();
    let value = Value::deserialize(&mut de).and_then(|v| de.end().map(|_| v));
    let value = value.map_err(|e| super::resources::invalid("", "", &format!("{what} is not valid JSON ({e})")))?;
    check_numbers(&value, what)?;
    Ok(value)
}

/// An invalid-schema error at the first number whose exponent is past what an exact
/// decimal holds (`1e99999999999999999999`): read as anything else, a bound or a step
/// would silently change the language. A quick pass first; the pointer is found only
/// when one is there.
fn check_numbers(document: &Value, what: &str) -> Result<()> {
    let bad = |v: &Value| matches!(v, Value::Number(n) if Decimal::parse(&n.to_string()).is_none());
    let mut stack = vec![document];
    let mut found = false;
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(m) => stack.extend(m.values()),
            other => found |= bad(other),
        }
    }
    if !found {
        return Ok(());
    }
    let mut stack: Vec<(&Value, String)> = vec![(document, String::new())];
    while let Some((v, at)) = stack.pop() {
        match v {
            Value::Array(a) => stack.extend(a.iter().enumerate().map(|(i, x)| (x, format!("{at}/{i}")))),
            Value::Object(m) => stack.extend(m.iter().map(|(k, x)| (x, format!("{at}/{}", super::resources::escape_pointer(k))))),
            other if bad(other) => {
                let why = format!("{what}: the number {other} has an exponent out of range");
                return Err(super::resources::invalid(&at, "", &why));
            }
            _ => {}
        }
    }
    Ok(())
}
