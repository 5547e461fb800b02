//! The `format` keyword's languages: for each format JSON Schema defines that a regular
//! language expresses, the strings it allows, as judged by the official JSON Schema Test
//! Suite (`optional/format` of drafts 4, 7 and 2020-12) and the RFCs it follows. The
//! drafts do not differ in what a format means, so nothing here depends on the draft.
//!
//! A format is a fixed pattern ([`value_pattern`], over the decoded value) rendered over
//! the value's JSON encoding ([`format_source`], what the model writes between the
//! quotes). The automata of the rendered patterns ship prebuilt, keyed by that exact text
//! ([`crate::frontend::regex::prebuilt`]); [`format_dfa`] reads them from there and
//! compiles the pattern only when an entry is missing or does not fit the limits.
//!
//! Where a pattern cannot be exact, [`gap`] says what it does not enforce (it then
//! accepts a few strings the format forbids). Formats that no regular expression can
//! express (`regex`) or that would need all of Unicode's IDNA tables (`idn-hostname`) have
//! no language here: [`kind`] tells them from unknown names, which are annotations.

use std::sync::OnceLock;

use crate::automata::Dfa;
use crate::error::{Error, Result};
use crate::frontend::regex::{self, prebuilt};
use crate::limits::Limits;

mod patterns;
mod render;
#[cfg(test)]
mod tests;

/// The formats with a language, sorted by name.
pub const FORMAT_NAMES: [&str; 17] = [
    "date",
    "date-time",
    "duration",
    "email",
    "hostname",
    "idn-email",
    "ipv4",
    "ipv6",
    "iri",
    "iri-reference",
    "json-pointer",
    "relative-json-pointer",
    "time",
    "uri",
    "uri-reference",
    "uri-template",
    "uuid",
];

/// Formats JSON Schema defines that no regular language here expresses.
pub const INEXPRESSIBLE_FORMATS: [&str; 2] = ["idn-hostname", "regex"];

/// What a `format` value is to the translator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatKind {
    /// A format with a language ([`format_dfa`]): enforced.
    Regular,
    /// A format JSON Schema defines that has no language here: an assertion that cannot be
    /// kept, to be reported.
    Inexpressible,
    /// Any other name: an annotation, ignored.
    Unknown,
}

/// What format `name` is (see [`FormatKind`]).
pub fn kind(name: &str) -> FormatKind {
    if FORMAT_NAMES.contains(&name) {
        FormatKind::Regular
    } else if INEXPRESSIBLE_FORMATS.contains(&name) {
        FormatKind::Inexpressible
    } else {
        FormatKind::Unknown
    }
}

/// One format's patterns: over the decoded value, and rendered over its JSON encoding
/// (an error kept, not hidden, should a constant pattern fail to render).
struct Rendered {
    value: Result<String>,
    json: Result<String>,
}

/// Format `i`'s patterns (of [`FORMAT_NAMES`]), rendered the first time it is asked for:
/// a schema uses a few formats, and rendering all of them costs milliseconds.
fn rendered(i: usize) -> &'static Rendered {
    static ALL: [OnceLock<Rendered>; FORMAT_NAMES.len()] = [const { OnceLock::new() }; FORMAT_NAMES.len()];
    ALL[i].get_or_init(|| {
        let name = FORMAT_NAMES[i];
        // The patterns are constants that the tests render; a failure here is a bug,
        // reported as one by every function that needs the pattern.
        let value = patterns::value_pattern(name).ok_or_else(|| Error::Internal(format!("the format `{name}` has no pattern")));
        let json = value.clone().and_then(|v| render::render_json(&v));
        Rendered { value, json }
    })
}

fn find(name: &str) -> Option<&'static Rendered> {
    FORMAT_NAMES.iter().position(|n| *n == name).map(rendered)
}

/// The pattern (Python `re` syntax, `re.fullmatch` meaning) of the decoded strings of
/// format `name`; None for a name without a language.
pub fn value_pattern(name: &str) -> Option<&'static str> {
    find(name).and_then(|r| r.value.as_deref().ok())
}

/// The pattern (Python `re` syntax) of format `name`'s strings as JSON writes them between
/// the quotes, in the text the prebuilt table is keyed by; None for a name without a
/// language.
pub fn format_source(name: &str) -> Option<&'static str> {
    find(name).and_then(|r| r.json.as_deref().ok())
}

/// A pattern of format `name` (`pick` chooses which): None for a name without a
/// language, an internal error for one whose constant pattern failed to render.
fn pattern_of(name: &str, pick: fn(&'static Rendered) -> &'static Result<String>) -> Result<Option<&'static str>> {
    match find(name).map(pick) {
        None => Ok(None),
        Some(Ok(p)) => Ok(Some(p.as_str())),
        Some(Err(e)) => Err(e.clone()),
    }
}

/// Every pattern a `format` alone is compiled from: each format's [`format_source`] and
/// the same between double quotes (a whole JSON string), by name. The prebuilt table has
/// an entry for each.
pub fn format_sources() -> Vec<String> {
    (0..FORMAT_NAMES.len())
        .map(rendered)
        .filter_map(|r| r.json.as_ref().ok())
        .flat_map(|j| [j.clone(), format!("\"{j}\"")])
        .collect()
}

/// The automaton of `pattern`, prebuilt when the table has it within `limits`.
fn dfa_of(pattern: &str, limits: &Limits) -> Result<Dfa> {
    match prebuilt::lookup(pattern, limits) {
        Some(dfa) => Ok(dfa),
        None => regex::compile(pattern, limits),
    }
}

/// The automaton of format `name`'s strings as JSON writes them between the quotes; None
/// for a name without a language.
pub fn format_dfa(name: &str, limits: &Limits) -> Result<Option<Dfa>> {
    pattern_of(name, |r| &r.json)?.map(|p| dfa_of(p, limits)).transpose()
}

/// The automaton of format `name`'s strings as whole JSON strings, quotes included; None
/// for a name without a language.
pub fn format_string_dfa(name: &str, limits: &Limits) -> Result<Option<Dfa>> {
    pattern_of(name, |r| &r.json)?.map(|p| dfa_of(&format!("\"{p}\""), limits)).transpose()
}

/// The automaton of format `name`'s decoded values (to check a given string, such as an
/// `enum` member, against the format); None for a name without a language. Built anew.
pub fn value_dfa(name: &str, limits: &Limits) -> Result<Option<Dfa>> {
    pattern_of(name, |r| &r.value)?.map(|p| regex::compile(p, limits)).transpose()
}

const LEAP: &str = "Leap seconds are accepted only as 23:59:60 with offset Z or +/-00:00; a leap second \
written in another offset (e.g. 15:59:60-08:00) is valid but rejected (the exact set costs about 23,000 \
automaton states).";

/// What format `name`'s language does not enforce, for the formats it cannot be exact for.
pub fn gap(name: &str) -> Option<&'static str> {
    Some(match name {
        "time" | "date-time" => LEAP,
        "hostname" => {
            "The total length limit (253 characters) is not enforced: only the 63-octet label limit is (an \
exact length-bounded pattern would need thousands of states). A-labels ('xn--' labels) are not \
Punycode-decoded, so those that decode to something IDNA2008 forbids are accepted."
        }
        "email" => "The RFC 5321 size limits (local part 64 octets, domain 255 octets) are not enforced.",
        "idn-email" => {
            "The RFC 5321 size limits are not enforced. U-labels in the domain are checked only loosely \
(letters, digits, hyphens and non-ASCII characters other than controls, NBSP and the IDNA full stops; no \
hyphen first or last; at most 63 characters): IDNA2008 code point validity, contextual rules, Bidi rules \
and NFC are not checked, and A-labels are not Punycode-decoded."
        }
        _ => return None,
    })
}
