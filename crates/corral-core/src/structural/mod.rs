//! Structural tags: XGrammar's JSON description of an output made of parts (free text,
//! tagged regions such as tool calls, JSON, grammars), compiled onto corral grammars.
//!
//! Each format of the description becomes a [`Grammar`], and the compositions become
//! joins and repetitions of them ([`Grammar::join`], [`Grammar::repeat`]); nothing new is
//! needed at run time, so the result is exact like every corral grammar (a trigger split
//! across tokens, or starting inside one, is just bytes to the lexer).
//!
//! | format | grammar |
//! |---|---|
//! | `const_string` | the string |
//! | `json_schema` | the schema's JSON (see [`TagOptions`]), or its top object in an XML `style` (see [`XmlStyle`]) |
//! | `grammar` | a GBNF grammar, start rule `root` |
//! | `regex` | a Python `re` pattern |
//! | `any_text` | text without its `excludes`, nor the enclosing tag's end |
//! | `sequence`, `or` | concatenation, union |
//! | `optional`, `plus`, `star`, `repeat` | repetitions |
//! | `tag` | `begin`, content, one of `end` |
//! | `triggered_tags` | free text without the triggers, where each trigger starts a tag |
//! | `tags_with_separator` | tags separated by a string, nothing around them |
//! | `dispatch` | `triggered_tags` whose triggers are the patterns |
//! | `token` | one whole token, by id or by its exact text |
//! | `any_tokens` | any run of text and tokens but `exclude_tokens` and the enclosing end token |
//! | `exclude_token` | the same, not empty, within one token |
//! | `token_triggered_tags`, `token_dispatch` | the same over trigger tokens |
//!
//! The enclosing tag's end strings are passed down to every part of its content (each
//! element of a `sequence`, each branch of an `or`, the free text of `triggered_tags`) but
//! not into nested tags, which have ends of their own: no free text inside a tag holds its
//! end, as in XGrammar, so a parser that cuts at the first end reads the tag whole. A tag's
//! `begin` and `end` may be tokens: free text cannot hold a whole token (text is text), and
//! a run of tokens leaves out the end token. A named token is matched by its id, never by
//! its text spelled in other tokens (see the grammars' token references), so free text
//! may spell a marker's text in ordinary tokens, as in XGrammar.
//! `any_text`'s `max_chars` bounds its characters and `max_tokens` (also on `any_tokens`)
//! the model's tokens holding any of its bytes: a reasoning budget, which the matcher
//! counts (see [`Grammar::within_tokens`]); `exclude_token` is `any_tokens` not empty
//! within one token (see [`Grammar::one_token_except`]).

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::grammar::lower::shared_pieces::share_built_pieces;
use crate::grammar::{Grammar, Join};
use crate::json_schema::compile::{on_deep_stack, schema_grammar};
use crate::json_schema::document::nesting;
use crate::json_schema::translate::{SchemaOptions, Whitespace, XmlStyle};
use crate::limits::Limits;
use crate::util::interrupt;
use crate::vocab::TokenRefs;
use crate::Dialect;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod xml_tests;

/// How the formats that leave a choice are compiled.
#[derive(Debug, Clone)]
pub struct TagOptions {
    /// The options of every `json_schema` format (`any_order` in a format sets
    /// `any_order` for it). By default JSON Schema's defaults with up to 16 whitespace
    /// characters between tokens, as models write tool arguments (`{"city": "Paris"}`).
    pub json: SchemaOptions,
    /// What `\d \w \s` mean in the `regex` and `grammar` formats (the host's, as for
    /// [`Grammar::regex`]); None: corral's Unicode tables.
    pub classes: Option<crate::PerlClasses>,
}

impl Default for TagOptions {
    fn default() -> Self {
        TagOptions {
            json: SchemaOptions { whitespace: Whitespace::Flexible { max: 16 }, ..SchemaOptions::default() },
            classes: None,
        }
    }
}

/// A structural tag compiled: the grammar, and what the JSON Schema translations noticed.
#[derive(Debug)]
pub struct StructuralTag {
    /// The grammar of the whole output.
    pub grammar: Grammar,
    /// Findings of the JSON Schema translations, each naming its format.
    pub warnings: Vec<String>,
    /// The description's fixed strings (constant strings, triggers, tags' begins and
    /// ends, separators, the markers of XML styles), in the order met: where a special
    /// token's text occurs in one, the token stands for that text.
    pub markers: Vec<String>,
}

/// Compiles a structural tag (`{"type": "structural_tag", "format": {...}}`, or a format
/// object alone) written as JSON `text`. Errors name the format by its JSON pointer.
///
/// The whole build runs on one thread with the stack the JSON Schema translations need
/// (see `json_schema::compile`), which every `json_schema` format then shares, as the
/// schemas share the automata they build (see `grammar::lower::shared_pieces`).
pub fn structural_tag(text: &str, options: &TagOptions, limits: &Limits) -> Result<StructuralTag> {
    on_deep_stack(limits, || {
        share_built_pieces(|| {
            let spec = read_spec(text, limits)?;
            let root = At::root();
            let (format, at) = match spec.get("type").and_then(Value::as_str) {
                Some("structural_tag") => {
                    (spec.get("format").ok_or_else(|| spec_error("", "no \"format\""))?, root.key("format"))
                }
                _ => (&spec, root),
            };
            let mut b = Builder::new(options, limits, BTreeSet::new());
            let mut grammar = b.format(format, &at, &Ends::default())?;
            // A token named by a token format whose text the description also writes as
            // text (GLM's `<arg_key>`, excluded from free text and written in arguments)
            // is read as text everywhere, as a special token of a marker's text is.
            let clash: BTreeSet<Vec<u8>> = (b.named.iter())
                .filter(|n| b.markers.iter().any(|m| m.as_bytes().windows(n.len()).any(|w| w == n.as_slice())))
                .cloned()
                .collect();
            if !clash.is_empty() {
                b = Builder::new(options, limits, clash);
                grammar = b.format(format, &at, &Ends::default())?;
            }
            b.markers.retain(|m| !m.is_empty());
            Ok(StructuralTag { grammar, warnings: b.warnings, markers: b.markers })
        })
    })
}

/// The description's JSON. It may nest as deep as a schema document may
/// (`Limits::max_schema_document_depth`), past serde_json's own bound of 128 levels: the
/// reader and the builder recurse per level on the deep stack this runs on.
fn read_spec(text: &str, limits: &Limits) -> Result<Value> {
    let (depth, at) = nesting(text);
    if depth > limits.max_schema_document_depth + 1 {
        return Err(Error::LimitExceeded {
            limit: "max_schema_document_depth",
            value: limits.max_schema_document_depth,
            context: format!("the structural tag: JSON values nest {} deep (at byte {at})", depth - 1),
        });
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = Value::deserialize(&mut de).and_then(|v| de.end().map(|_| v));
    value.map_err(|e| spec_error("", &format!("not valid JSON ({e})")))
}

/// A format's place in the description: the steps from the root, each kept by the
/// format inside it, and written out as a JSON pointer only for a message (a pointer
/// kept per level would take memory growing with the square of the depth).
#[derive(Clone, Copy)]
struct At<'p> {
    parent: Option<&'p At<'p>>,
    key: &'static str,
    index: Option<usize>,
}

impl<'p> At<'p> {
    fn root() -> At<'static> {
        At { parent: None, key: "", index: None }
    }

    /// The field `key` of this format.
    fn key(&'p self, key: &'static str) -> At<'p> {
        At { parent: Some(self), key, index: None }
    }

    /// Item `i` of this format's list `key`.
    fn item(&'p self, key: &'static str, i: usize) -> At<'p> {
        At { parent: Some(self), key, index: Some(i) }
    }
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut steps = Vec::new();
        let mut at = Some(self);
        while let Some(step) = at {
            steps.push(step);
            at = step.parent;
        }
        for step in steps.iter().rev().filter(|s| s.parent.is_some()) {
            write!(f, "/{}", step.key)?;
            if let Some(i) = step.index {
                write!(f, "/{i}")?;
            }
        }
        Ok(())
    }
}

/// An invalid structural tag, at a JSON pointer into it.
fn spec_error(pointer: impl std::fmt::Display, what: &str) -> Error {
    let pointer = pointer.to_string();
    let at = if pointer.is_empty() { "/" } else { &pointer };
    Error::Grammar { message: format!("structural tag at {at}: {what}"), line: 0, col: 0 }
}

/// An error from a part's own compiler, with the format it came from (the innermost
/// format: an error that already names one is left as it is).
fn in_format(e: Error, pointer: impl std::fmt::Display) -> Error {
    const HEAD: &str = "structural tag at ";
    let pointer = pointer.to_string();
    let at = if pointer.is_empty() { "/" } else { &pointer };
    let place = |text: String| if text.starts_with(HEAD) { text } else { format!("{HEAD}{at}: {text}") };
    match e {
        Error::Schema { kind, message, pointer: p, keyword } => {
            Error::Schema { kind, message: place(message), pointer: p, keyword }
        }
        Error::Grammar { message, line, col } => Error::Grammar { message: place(message), line, col },
        Error::RegexSyntax { message, pattern, position } => Error::RegexSyntax { message: place(message), pattern, position },
        Error::LimitExceeded { limit, value, context } => Error::LimitExceeded { limit, value, context: place(context) },
        other => other,
    }
}

struct Builder<'a> {
    options: &'a TagOptions,
    limits: &'a Limits,
    warnings: Vec<String>,
    markers: Vec<String>,
    /// The texts of the tokens the token formats name by text.
    named: BTreeSet<Vec<u8>>,
    /// Those read as text (see [`Named`]).
    as_text: BTreeSet<Vec<u8>>,
}

/// Tokens a token format names: those matched as whole tokens, and the texts of those
/// read as text (named by a text that the description also writes as text).
#[derive(Default, Clone, PartialEq)]
struct Named {
    refs: TokenRefs,
    texts: Vec<Vec<u8>>,
}

impl<'a> Builder<'a> {
    fn new(options: &'a TagOptions, limits: &'a Limits, as_text: BTreeSet<Vec<u8>>) -> Self {
        Builder { options, limits, warnings: Vec::new(), markers: Vec::new(), named: BTreeSet::new(), as_text }
    }

    /// One token, written as XGrammar writes it: an id, or the token's exact text.
    fn token(&mut self, v: Option<&Value>, at: &At<'_>) -> Result<Named> {
        let mut out = Named::default();
        match v {
            Some(Value::Number(n)) => match n.as_u64().filter(|&id| id <= u32::MAX as u64) {
                Some(id) => out.refs.add_ids(id as u32, id as u32),
                None => return Err(spec_error(at, "must be a token id from 0, or a token's text")),
            },
            Some(Value::String(text)) if !text.is_empty() => {
                let text = text.as_bytes().to_vec();
                self.named.insert(text.clone());
                match self.as_text.contains(&text) {
                    true => out.texts.push(text),
                    false => {
                        out.refs.names.insert(text);
                    }
                }
            }
            _ => return Err(spec_error(at, "must be a token id or a token's text")),
        }
        Ok(out)
    }

    /// The list of tokens `key` of `v` (absent: none).
    fn token_list(&mut self, v: &Value, key: &'static str, at: &At<'_>) -> Result<Named> {
        let mut out = Named::default();
        match v.get(key) {
            None => {}
            Some(Value::Array(a)) => {
                for (i, t) in a.iter().enumerate() {
                    let one = self.token(Some(t), &at.item(key, i))?;
                    out.refs.extend(&one.refs);
                    out.texts.extend(one.texts);
                }
            }
            Some(_) => return Err(spec_error(format!("{at}/{key}"), "must be a list of tokens")),
        }
        Ok(out)
    }

    /// The grammar of one token from [`Builder::token`]: the token, or its text.
    fn one_token(&mut self, t: &Named) -> Result<Grammar> {
        match t.texts.first() {
            Some(text) => {
                self.markers.push(String::from_utf8_lossy(text).into_owned());
                Grammar::literal(text, self.limits)
            }
            None => Grammar::token_among(&t.refs, self.limits),
        }
    }

    /// The grammar of the format `v` at `at`; `ends`: the end strings of the tag it ends.
    /// Errors name the innermost format they arose in.
    fn format(&mut self, v: &Value, at: &At<'_>, ends: &Ends) -> Result<Grammar> {
        self.format_here(v, at, ends).map_err(|e| in_format(e, at))
    }

    fn format_here(&mut self, v: &Value, at: &At<'_>, ends: &Ends) -> Result<Grammar> {
        interrupt::check()?;
        let kind = v.get("type").and_then(Value::as_str).ok_or_else(|| spec_error(at, "a format needs a string \"type\""))?;
        let limits = self.limits;
        match kind {
            "const_string" => {
                let value = string(v, "value", at)?;
                self.markers.push(value.to_string());
                Grammar::literal(value.as_bytes(), limits)
            }
            "json_schema" => self.json_schema(v, at),
            "grammar" => {
                Grammar::cfg_text(string(v, "grammar", at)?, Dialect::Gbnf, Some("root"), limits, self.options.classes.as_ref())
            }
            "regex" => Grammar::regex(string(v, "pattern", at)?, limits, self.options.classes.as_ref()),
            "any_text" => {
                let mut excluded = excludes(v, at)?;
                excluded.extend(ends.text.iter().cloned());
                let text = match budget(v, "max_chars", at)? {
                    None => Grammar::text_excluding(&excluded, limits)?,
                    Some(n) => Grammar::text_excluding_within(&excluded, n, limits)?,
                };
                within_tokens(text, budget(v, "max_tokens", at)?, limits)
            }
            "sequence" => {
                let parts = array(v, "elements", at)?
                    .iter()
                    .enumerate()
                    .map(|(i, e)| self.format(e, &at.item("elements", i), ends))
                    .collect::<Result<Vec<_>>>()?;
                Grammar::join(&parts, Join::Concat, limits)
            }
            "or" => {
                let mut parts = Vec::new();
                for (i, e) in array(v, "elements", at)?.iter().enumerate() {
                    let here = at.item("elements", i);
                    let part = self.format(e, &here, ends);
                    parts.extend(self.unless_empty(part, &here)?);
                }
                if parts.is_empty() {
                    return Err(nothing(at, "no element allows any text"));
                }
                join(&parts, Join::Union, limits)
            }
            "optional" | "plus" | "star" | "repeat" => self.repetition(v, kind, at, ends),
            "tag" => self.tag(v, at),
            "triggered_tags" => self.triggered_tags(v, at, ends),
            "tags_with_separator" => self.tags_with_separator(v, at),
            "token" => {
                let t = self.token(v.get("token"), &at.key("token"))?;
                self.one_token(&t)
            }
            "dispatch" => self.dispatch(v, at, ends),
            "any_tokens" => {
                let mut excluded = self.token_list(v, "exclude_tokens", at)?;
                excluded.refs.extend(&ends.tokens);
                excluded.texts.extend(ends.text.iter().cloned());
                let run = Grammar::tokens_except(&excluded.refs, &excluded.texts, limits)?;
                within_tokens(run, budget(v, "max_tokens", at)?, limits)
            }
            "token_triggered_tags" => self.token_triggered_tags(v, at, ends),
            "token_dispatch" => self.token_dispatch(v, at, ends),
            "exclude_token" => {
                let mut excluded = self.token_list(v, "exclude_tokens", at)?;
                excluded.refs.extend(&ends.tokens);
                excluded.texts.extend(ends.text.iter().cloned());
                Grammar::one_token_except(&excluded.refs, &excluded.texts, limits)
            }
            other => Err(spec_error(at, &format!("unknown format type {other:?}"))),
        }
    }

    fn json_schema(&mut self, v: &Value, at: &At<'_>) -> Result<Grammar> {
        let schema = v.get("json_schema").ok_or_else(|| spec_error(at, "no \"json_schema\""))?;
        let mut options = self.options.json.clone();
        // The output is not JSON throughout: the value is a JSON region of it.
        options.json_region = true;
        options.xml = style(v, at)?;
        if let Some(style) = options.xml {
            self.markers.extend(style.markers().iter().map(|m| m.to_string()));
        }
        options.excludes = excludes(v, at)?.into_iter().map(|x| String::from_utf8_lossy(&x).into_owned()).collect();
        if let Some(any) = v.get("any_order") {
            options.any_order = any.as_bool().ok_or_else(|| spec_error(format!("{at}/any_order"), "must be a boolean"))?;
        }
        match v.get("max_whitespace_cnt") {
            None | Some(Value::Null) => {}
            Some(n) => {
                let max = n.as_u64().filter(|&n| n <= u32::MAX as u64);
                let max = max.ok_or_else(|| spec_error(format!("{at}/max_whitespace_cnt"), "must be a count from 0"))?;
                options.whitespace = Whitespace::Flexible { max: max as u32 };
            }
        }
        let text = serde_json::to_string(schema).map_err(|e| Error::Internal(e.to_string()))?;
        let built = schema_grammar(&text, &[], &options, self.limits).map_err(|e| in_format(e, format!("{at}/json_schema")))?;
        self.warnings.extend(built.warnings.into_iter().map(|w| format!("structural tag at {at}: {w}")));
        Ok(built.grammar)
    }

    fn repetition(&mut self, v: &Value, kind: &str, at: &At<'_>, ends: &Ends) -> Result<Grammar> {
        let content = v.get("content").ok_or_else(|| spec_error(at, "no \"content\""))?;
        let (min, max) = match kind {
            "optional" => (0, Some(1)),
            "plus" => (1, None),
            "star" => (0, None),
            _ => {
                let min = count(v, "min", at)?.ok_or_else(|| spec_error(format!("{at}/min"), "must be a count from 0"))?;
                (min, count(v, "max", at)?)
            }
        };
        if max.is_some_and(|m| m < min) {
            return Err(spec_error(format!("{at}/max"), "is below min"));
        }
        let here = at.key("content");
        let part = self.format(content, &here, ends);
        match self.unless_empty(part, &here)? {
            Some(part) => Grammar::repeat(&part, min, max, self.limits),
            // Only no repetition is left.
            None if min == 0 => Grammar::literal(b"", self.limits),
            None => Err(nothing(at, "its content allows no text")),
        }
    }

    /// Free text in which each rule's pattern, once written, is followed by its format:
    /// `triggered_tags` whose triggers are the patterns and whose tags end with their
    /// format (`loop: false`: at most one).
    fn dispatch(&mut self, v: &Value, at: &At<'_>, ends: &Ends) -> Result<Grammar> {
        let rules = array(v, "rules", at)?;
        let mut triggers = Vec::with_capacity(rules.len());
        let mut tags = Vec::with_capacity(rules.len());
        for (i, rule) in rules.iter().enumerate() {
            let (Some(pattern), Some(format)) = (rule.get(0).and_then(Value::as_str), rule.get(1)) else {
                return Err(spec_error(format!("{at}/rules/{i}"), "must be a [pattern, format] pair"));
            };
            triggers.push(Value::from(pattern));
            tags.push(serde_json::json!({"type": "tag", "begin": pattern, "content": format, "end": ""}));
        }
        let looped = loop_flag(v, at)?;
        let excludes = v.get("excludes").cloned().unwrap_or_else(|| Value::Array(Vec::new()));
        let spec = serde_json::json!({"triggers": triggers, "tags": tags, "excludes": excludes, "stop_after_first": !looped});
        self.triggered_tags(&spec, at, ends)
    }

    /// `begin`, the content (whose free text stops at the ends), one of the ends.
    fn tag(&mut self, v: &Value, at: &At<'_>) -> Result<Grammar> {
        self.tag_after(v, at, 0)
    }

    /// A tag without the first `skip` bytes of its `begin` (written already: a trigger);
    /// a `begin` that is a token is left out whole when `skip` is not 0.
    fn tag_after(&mut self, v: &Value, at: &At<'_>, skip: usize) -> Result<Grammar> {
        let l = self.limits;
        let begin = match v.get("begin") {
            Some(Value::String(begin)) => {
                self.markers.push(begin.to_string());
                Grammar::literal(&begin.as_bytes()[skip.min(begin.len())..], l)?
            }
            Some(t @ Value::Object(_)) if t.get("type").and_then(Value::as_str) == Some("token") => match skip {
                0 => {
                    let begin = self.token(t.get("token"), &at.key("begin").key("token"))?;
                    self.one_token(&begin)?
                }
                _ => Grammar::literal(b"", l)?,
            },
            _ => return Err(spec_error(format!("{at}/begin"), "must be a string or a format of type \"token\"")),
        };
        let mut ends = Ends::default();
        let end = match v.get("end") {
            Some(Value::String(e)) => {
                ends.text.push(e.as_bytes().to_vec());
                Grammar::literal(e.as_bytes(), l)?
            }
            Some(Value::Array(_)) => {
                ends.text = strings(v, "end", at, true)?;
                let end_grammars = ends.text.iter().map(|e| Grammar::literal(e, l)).collect::<Result<Vec<_>>>()?;
                join(&end_grammars, Join::Union, l)?
            }
            Some(t @ Value::Object(_)) if t.get("type").and_then(Value::as_str) == Some("token") => {
                let end = self.token(t.get("token"), &at.key("end").key("token"))?;
                ends.text.extend(end.texts.iter().cloned());
                ends.tokens = end.refs.clone();
                self.one_token(&end)?
            }
            _ => {
                return Err(spec_error(format!("{at}/end"), "must be a string, a list of strings or a format of type \"token\""))
            }
        };
        self.markers.extend(ends.text.iter().map(|e| String::from_utf8_lossy(e).into_owned()));
        let content = v.get("content").ok_or_else(|| spec_error(at, "no \"content\""))?;
        let content = self.format(content, &at.key("content"), &ends)?;
        Grammar::join(&[begin, content, end], Join::Concat, l)
    }

    /// The tags of `tags_with_separator`, as one union (None: none allows any text).
    fn tags(&mut self, v: &Value, at: &At<'_>) -> Result<Option<Grammar>> {
        let mut grammars = Vec::new();
        for (i, t) in array(v, "tags", at)?.iter().enumerate() {
            let here = at.item("tags", i);
            check_tag(t, &here)?;
            let tag = self.tag(t, &here);
            grammars.extend(self.unless_empty(tag, &here)?);
        }
        if grammars.is_empty() {
            return Ok(None);
        }
        join(&grammars, Join::Union, self.limits).map(Some)
    }

    /// `part`, or None with a warning when it allows no text at all (a tool whose
    /// parameters are `false`): what holds it is dropped, as an alternative of a grammar
    /// that matches nothing is.
    fn unless_empty(&mut self, part: Result<Grammar>, at: &At<'_>) -> Result<Option<Grammar>> {
        match part {
            Err(Error::EmptyLanguage { what }) => {
                let at = at.to_string();
                let at = if at.is_empty() { "/" } else { &at };
                self.warnings.push(format!("structural tag at {at}: dropped, it allows no text ({what})"));
                Ok(None)
            }
            other => other.map(Some),
        }
    }

    /// Free text without the triggers; writing a trigger starts one of the tags.
    ///
    /// Built as `(F_j R_j | ...)* T`: `T` is the free text, `F_j` the free text followed by
    /// trigger `j` (one automaton), `R_j` the rest of the tags that trigger begins. So the
    /// lexer reads free text with two automata, and a tag's terminals start only where a
    /// trigger has just been written, not at every byte of the text.
    fn triggered_tags(&mut self, v: &Value, at: &At<'_>, ends: &Ends) -> Result<Grammar> {
        let triggers = strings(v, "triggers", at, true)?;
        self.markers.extend(triggers.iter().map(|t| String::from_utf8_lossy(t).into_owned()));
        let tags = array(v, "tags", at)?;
        for (i, t) in triggers.iter().enumerate() {
            if t.is_empty() {
                return Err(spec_error(format!("{at}/triggers/{i}"), "a trigger must not be empty"));
            }
        }
        // Each tag under the shortest trigger its begin starts with: the one a reader of
        // the text meets first. A trigger that only begins tags a shorter trigger also
        // begins (or repeats another) keeps them out of free text, with no branch of its own.
        let mut rests: Vec<Vec<Grammar>> = vec![Vec::new(); triggers.len()];
        let mut begun = vec![false; triggers.len()];
        for (i, t) in tags.iter().enumerate() {
            let here = at.item("tags", i);
            check_tag(t, &here)?;
            let begin = string(t, "begin", &here)?.as_bytes();
            for (j, trigger) in triggers.iter().enumerate() {
                begun[j] |= begin.starts_with(trigger);
            }
            let j = (0..triggers.len()).filter(|&j| begin.starts_with(&triggers[j])).min_by_key(|&j| triggers[j].len());
            let Some(j) = j else {
                let shown = String::from_utf8_lossy(begin);
                return Err(spec_error(format!("{here}/begin"), &format!("{shown:?} does not start with any trigger")));
            };
            let tag = self.tag_after(t, &here, triggers[j].len());
            rests[j].extend(self.unless_empty(tag, &here)?);
        }
        if flag(v, "at_least_one", at)? && rests.iter().all(Vec::is_empty) {
            return Err(nothing(at, "a tag is required and none allows any text"));
        }
        if let Some(j) = begun.iter().position(|b| !b) {
            return Err(spec_error(format!("{at}/triggers/{j}"), "this trigger begins no tag"));
        }
        // Excluded from free text, and from the text up to a trigger with the trigger.
        let mut excluded = excludes(v, at)?;
        excluded.extend(ends.text.iter().cloned());
        let l = self.limits;
        let free = Grammar::text_excluding(&[triggers.clone(), excluded.clone()].concat(), l)?;
        let (at_least_one, stop_after_first) = (flag(v, "at_least_one", at)?, flag(v, "stop_after_first", at)?);
        // Only the forms the flags use are built: each copies every tag's grammar.
        let (need_bare, need_after_text) = (at_least_one, !(at_least_one && stop_after_first));
        let (mut after_text, mut bare) = (Vec::new(), Vec::new());
        for (t, rest) in triggers.iter().zip(&rests).filter(|(_, rest)| !rest.is_empty()) {
            let rest = join(rest, Join::Union, l)?;
            let trigger = Grammar::literal(t, l)?;
            if need_after_text {
                if let Some(text_then_trigger) = Grammar::text_then_trigger(t, &triggers, &excluded, l)? {
                    after_text.push(Grammar::join(&[text_then_trigger, rest.clone()], Join::Concat, l)?);
                }
            }
            if need_bare {
                bare.push(Grammar::join(&[trigger, rest], Join::Concat, l)?);
            }
        }
        // No branch after text when every trigger holds an excluded string or an end.
        let bare = if need_bare { bare } else { Vec::new() };
        triggered(free, bare, after_text, stop_after_first, l)
    }

    /// `token_triggered_tags`: free text and tokens without the trigger tokens (nor
    /// `exclude_tokens`, nor the enclosing tag's end token); writing a trigger token
    /// starts one of the tags that begin with it. The triggers are whole tokens, so
    /// free text spelling a trigger's text in other tokens is free text.
    fn token_triggered_tags(&mut self, v: &Value, at: &At<'_>, ends: &Ends) -> Result<Grammar> {
        let triggers = match v.get("trigger_tokens") {
            Some(Value::Array(a)) if !a.is_empty() => {
                let mut triggers = Vec::with_capacity(a.len());
                for (i, t) in a.iter().enumerate() {
                    let here = at.item("trigger_tokens", i);
                    let trigger = self.token(Some(t), &here)?;
                    if let Some(text) = trigger.texts.first() {
                        let text = String::from_utf8_lossy(text);
                        return Err(spec_error(here, &format!(
                            "the trigger token {text:?} is also written as text in the description: it cannot be both (use triggered_tags)"
                        )));
                    }
                    triggers.push(trigger);
                }
                triggers
            }
            _ => return Err(spec_error(format!("{at}/trigger_tokens"), "must be a non-empty list of tokens")),
        };
        let tags = array(v, "tags", at)?;
        let mut rests: Vec<Vec<Grammar>> = vec![Vec::new(); triggers.len()];
        let mut begun = vec![false; triggers.len()];
        for (i, t) in tags.iter().enumerate() {
            let here = at.item("tags", i);
            check_tag(t, &here)?;
            let begin = match t.get("begin") {
                Some(b) if b.get("type").and_then(Value::as_str) == Some("token") => {
                    self.token(b.get("token"), &here.key("begin").key("token"))?
                }
                _ => return Err(spec_error(format!("{here}/begin"), "must be a format of type \"token\"")),
            };
            let Some(j) = triggers.iter().position(|tr| *tr == begin) else {
                return Err(spec_error(format!("{here}/begin"), "is none of the trigger tokens (written the same way)"));
            };
            begun[j] = true;
            let tag = self.tag_after(t, &here, 1);
            rests[j].extend(self.unless_empty(tag, &here)?);
        }
        let (at_least_one, stop_after_first) = (flag(v, "at_least_one", at)?, flag(v, "stop_after_first", at)?);
        if at_least_one && rests.iter().all(Vec::is_empty) {
            return Err(nothing(at, "a tag is required and none allows any text"));
        }
        if let Some(j) = begun.iter().position(|b| !b) {
            return Err(spec_error(format!("{at}/trigger_tokens/{j}"), "this trigger begins no tag"));
        }
        let l = self.limits;
        let mut excluded = self.token_list(v, "exclude_tokens", at)?;
        excluded.refs.extend(&ends.tokens);
        excluded.texts.extend(ends.text.iter().cloned());
        triggers.iter().for_each(|t| excluded.refs.extend(&t.refs));
        let free = Grammar::tokens_except(&excluded.refs, &excluded.texts, l)?;
        let (mut bare, mut after_text) = (Vec::new(), Vec::new());
        // A trigger whose tags were all dropped (allowing no text) starts nothing.
        for (trigger, rest) in triggers.iter().zip(&rests).filter(|(_, rest)| !rest.is_empty()) {
            let tagged = Grammar::join(&[Grammar::token_among(&trigger.refs, l)?, join(rest, Join::Union, l)?], Join::Concat, l)?;
            after_text.push(Grammar::join(&[free.clone(), tagged.clone()], Join::Concat, l)?);
            if at_least_one {
                bare.push(tagged);
            }
        }
        triggered(free, bare, after_text, stop_after_first, l)
    }

    /// `token_dispatch`: free text and tokens in which each rule's token, once written,
    /// is followed by its format; `token_triggered_tags` whose tags end with their format
    /// (`loop: false`: at most one).
    fn token_dispatch(&mut self, v: &Value, at: &At<'_>, ends: &Ends) -> Result<Grammar> {
        let rules = array(v, "rules", at)?;
        let (mut triggers, mut tags) = (Vec::with_capacity(rules.len()), Vec::with_capacity(rules.len()));
        for (i, rule) in rules.iter().enumerate() {
            let (Some(t), Some(format), None) = (rule.get(0), rule.get(1), rule.get(2)) else {
                return Err(spec_error(format!("{at}/rules/{i}"), "must be a [token, format] pair"));
            };
            let begin = serde_json::json!({"type": "token", "token": t});
            if !triggers.contains(t) {
                triggers.push(t.clone());
            }
            tags.push(serde_json::json!({"type": "tag", "begin": begin, "content": format, "end": ""}));
        }
        let looped = loop_flag(v, at)?;
        let excludes = v.get("exclude_tokens").cloned().unwrap_or_else(|| Value::Array(Vec::new()));
        let spec = serde_json::json!({"trigger_tokens": triggers, "tags": tags, "exclude_tokens": excludes, "stop_after_first": !looped});
        self.token_triggered_tags(&spec, at, ends)
    }

    /// Tags separated by `separator`, with nothing around them.
    fn tags_with_separator(&mut self, v: &Value, at: &At<'_>) -> Result<Grammar> {
        let separator = string(v, "separator", at)?;
        self.markers.push(separator.to_string());
        let sep = Grammar::literal(separator.as_bytes(), self.limits)?;
        let (at_least_one, stop_after_first) = (flag(v, "at_least_one", at)?, flag(v, "stop_after_first", at)?);
        let Some(tags) = self.tags(v, at)? else {
            return match at_least_one {
                true => Err(nothing(at, "a tag is required and none allows any text")),
                false => Grammar::literal(b"", self.limits),
            };
        };
        let l = self.limits;
        let one_or_more = || -> Result<Grammar> {
            let rest = Grammar::repeat(&Grammar::join(&[sep.clone(), tags.clone()], Join::Concat, l)?, 0, None, l)?;
            Grammar::join(&[tags.clone(), rest], Join::Concat, l)
        };
        match (at_least_one, stop_after_first) {
            (true, true) => Ok(tags),
            (false, true) => Grammar::repeat(&tags, 0, Some(1), l),
            (true, false) => one_or_more(),
            (false, false) => Grammar::repeat(&one_or_more()?, 0, Some(1), l),
        }
    }
}

/// What the free text inside a tag stops at: the tag's end strings, or its end token.
#[derive(Default)]
struct Ends {
    /// End strings: free text never holds one.
    text: Vec<Vec<u8>>,
    /// An end token: runs of tokens never hold it (text cannot: it is a whole token).
    tokens: TokenRefs,
}

/// Free text with tags: `bare` (tags with no text before them; given when one is
/// required), `after_text` (free text then a tag), `free` (free text) combined as the
/// flags of `triggered_tags` say: `stop_after_first` at most one tag, `bare` given: at
/// least one, first.
fn triggered(free: Grammar, bare: Vec<Grammar>, after_text: Vec<Grammar>, stop_after_first: bool, l: &Limits) -> Result<Grammar> {
    let after_text = if after_text.is_empty() { None } else { Some(join(&after_text, Join::Union, l)?) };
    let bare = if bare.is_empty() { None } else { Some(join(&bare, Join::Union, l)?) };
    match (bare, after_text) {
        (Some(bare), _) if stop_after_first => Ok(bare),
        (None, Some(after_text)) if stop_after_first => Grammar::join(&[free, after_text], Join::Union, l),
        (None, None) => Ok(free),
        (bare, after_text) => {
            let more = after_text.map(|a| Grammar::repeat(&a, 0, None, l)).transpose()?;
            let parts: Vec<Grammar> = bare.into_iter().chain(more).chain([free]).collect();
            join(&parts, Join::Concat, l)
        }
    }
}

/// The join of `parts`; one part is itself (a join would copy it for nothing).
fn join(parts: &[Grammar], how: Join, limits: &Limits) -> Result<Grammar> {
    match parts {
        [one] => Ok(one.clone()),
        _ => Grammar::join(parts, how, limits),
    }
}

/// A format that allows no text, at `at`.
fn nothing(at: &At<'_>, why: &str) -> Error {
    let at = at.to_string();
    let at = if at.is_empty() { "/" } else { &at };
    Error::EmptyLanguage { what: format!("structural tag at {at}: {why}") }
}

/// An error unless `v` is a format of type `tag`.
fn check_tag(v: &Value, at: &At<'_>) -> Result<()> {
    match v.get("type").and_then(Value::as_str) {
        Some("tag") => Ok(()),
        _ => Err(spec_error(at, "must be a format of type \"tag\"")),
    }
}

/// The string field `key` of `v`.
fn string<'v>(v: &'v Value, key: &str, at: &At<'_>) -> Result<&'v str> {
    v.get(key).and_then(Value::as_str).ok_or_else(|| spec_error(format!("{at}/{key}"), "must be a string"))
}

/// The non-empty array field `key` of `v`.
fn array<'v>(v: &'v Value, key: &str, at: &At<'_>) -> Result<&'v Vec<Value>> {
    match v.get(key) {
        Some(Value::Array(a)) if !a.is_empty() => Ok(a),
        _ => Err(spec_error(format!("{at}/{key}"), "must be a non-empty list")),
    }
}

/// The list of strings `key` of `v` (absent: empty, unless `required`).
fn strings(v: &Value, key: &str, at: &At<'_>, required: bool) -> Result<Vec<Vec<u8>>> {
    let bad = || spec_error(format!("{at}/{key}"), "must be a list of strings");
    match v.get(key) {
        None if !required => Ok(Vec::new()),
        Some(Value::Array(a)) if !(required && a.is_empty()) => {
            a.iter().map(|s| s.as_str().map(|s| s.as_bytes().to_vec()).ok_or_else(bad)).collect()
        }
        _ => Err(bad()),
    }
}

/// The `excludes` field of `v`: strings that may not occur. An empty one is an error: every
/// text contains it, so it would allow no text at all (XGrammar reads it so), which a
/// description never means.
fn excludes(v: &Value, at: &At<'_>) -> Result<Vec<Vec<u8>>> {
    let out = strings(v, "excludes", at, false)?;
    match out.iter().position(Vec::is_empty) {
        Some(i) => Err(spec_error(format!("{at}/excludes/{i}"), "is empty: every text contains the empty string")),
        None => Ok(out),
    }
}

/// The layout of a `json_schema` format's value: its `style` (None: JSON).
fn style(v: &Value, at: &At<'_>) -> Result<Option<XmlStyle>> {
    let name = match v.get("style") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(name)) => name.as_str(),
        Some(_) => return Err(spec_error(format!("{at}/style"), "must be a string")),
    };
    if name == "json" {
        return Ok(None);
    }
    XmlStyle::from_name(name).map(Some).ok_or_else(|| {
        let known = XmlStyle::NAMES.join(", ");
        spec_error(format!("{at}/style"), &format!("unknown style {name:?} (known: json, {known})"))
    })
}

/// The budget field `key` of `v` (`max_chars`, `max_tokens`): a count from 0, or None
/// (absent or null: no budget).
fn budget(v: &Value, key: &'static str, at: &At<'_>) -> Result<Option<u32>> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(n) => match n.as_u64().filter(|&n| n <= i32::MAX as u64) {
            Some(n) => Ok(Some(n as u32)),
            None => Err(spec_error(format!("{at}/{key}"), "must be a count from 0")),
        },
    }
}

/// `text` within a budget of tokens, if any (see [`Grammar::within_tokens`]).
fn within_tokens(text: Grammar, max_tokens: Option<u32>, limits: &Limits) -> Result<Grammar> {
    match max_tokens {
        Some(n) => text.within_tokens(n, limits),
        None => Ok(text),
    }
}

/// The `loop` field of a `dispatch` or `token_dispatch` (absent: true).
fn loop_flag(v: &Value, at: &At<'_>) -> Result<bool> {
    match v.get("loop") {
        None => Ok(true),
        Some(b) => b.as_bool().ok_or_else(|| spec_error(format!("{at}/loop"), "must be a boolean")),
    }
}

/// The boolean field `key` of `v` (absent: false).
fn flag(v: &Value, key: &str, at: &At<'_>) -> Result<bool> {
    match v.get(key) {
        None => Ok(false),
        Some(b) => b.as_bool().ok_or_else(|| spec_error(format!("{at}/{key}"), "must be a boolean")),
    }
}

/// The count field `key` of `v`: a number from 0, or None for -1 (no bound).
fn count(v: &Value, key: &str, at: &At<'_>) -> Result<Option<u32>> {
    match v.get(key).and_then(Value::as_i64) {
        Some(-1) => Ok(None),
        Some(n) if (0..=u32::MAX as i64).contains(&n) => Ok(Some(n as u32)),
        _ => Err(spec_error(format!("{at}/{key}"), "must be a count from 0 (or -1: no bound)")),
    }
}
