//! JSON values as JSON Schema compares them: kinds, equality (`1 == 1.0`, `true != 1`),
//! canonical keys (equal keys, equal values, so that enum members are compared by
//! hashing), and the compact text the grammar writes them as.

use serde_json::{Number, Value};

use super::super::numbers::Decimal;
use super::shape::Kinds;

/// The exact value of a JSON number (serde_json keeps the text as written).
pub(crate) fn decimal(n: &Number) -> Decimal {
    Decimal::parse(&n.to_string()).unwrap_or_else(Decimal::zero)
}

/// The number of a value, if it is one.
pub(crate) fn number(v: &Value) -> Option<Decimal> {
    match v {
        Value::Number(n) => Some(decimal(n)),
        _ => None,
    }
}

/// The kind of a value (a number by its value: `1.0` is an integer).
pub(crate) fn kind_of(v: &Value) -> Kinds {
    match v {
        Value::Null => Kinds::NULL,
        Value::Bool(_) => Kinds::BOOL,
        Value::Number(n) if decimal(n).is_integer() => Kinds::INT,
        Value::Number(_) => Kinds::FRAC,
        Value::String(_) => Kinds::STR,
        Value::Array(_) => Kinds::ARR,
        Value::Object(_) => Kinds::OBJ,
    }
}

/// Is the number written with a fraction or an exponent (`1.0`, `1e2`)? Draft 4 does not
/// count such a spelling as an integer.
pub(crate) fn written_as_float(v: &Value) -> bool {
    matches!(v, Value::Number(n) if n.to_string().contains(['.', 'e', 'E']))
}

/// JSON Schema equality.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    canon(a) == canon(b)
}

/// A key equal for values JSON Schema calls equal (see the module docs).
pub(crate) fn canon(v: &Value) -> String {
    let mut out = String::new();
    write_canon(v, &mut out);
    out
}

fn write_canon(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push('n'),
        Value::Bool(b) => out.push_str(if *b { "t" } else { "f" }),
        Value::Number(n) => {
            let d = decimal(n);
            out.push('#');
            out.push_str(&format!("{}{}e{}", if d.is_negative() { "-" } else { "" }, d.significant_digits(), d.exponent()));
        }
        Value::String(s) => {
            out.push('s');
            out.push_str(&serde_json::to_string(s).unwrap_or_default());
        }
        Value::Array(items) => {
            out.push('[');
            for x in items {
                write_canon(x, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, String)> = map.iter().map(|(k, x)| (k, canon(x))).collect();
            entries.sort();
            out.push('{');
            for (k, c) in entries {
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(':');
                out.push_str(&c);
                out.push(',');
            }
            out.push('}');
        }
    }
}

/// Compact JSON text (`","` and `":"` without spaces, non-ASCII as is), as the grammar
/// writes a value.
pub(crate) fn dump(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The JSON encoding of a string, without its quotes.
pub(crate) fn encoded(s: &str) -> String {
    let q = serde_json::to_string(s).unwrap_or_default();
    q[1..q.len() - 1].to_string()
}

/// A keyword value for a message (at most 60 characters).
pub(crate) fn show(v: &Value) -> String {
    dump(v).chars().take(60).collect()
}

/// Python's `repr` of a string (quotes chosen as Python does, ASCII control characters
/// and the C1 range escaped; other characters as they are).
pub(crate) fn repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || (0x7f..=0xa0).contains(&(c as u32)) => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}
