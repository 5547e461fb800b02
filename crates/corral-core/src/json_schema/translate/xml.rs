//! The XML layouts of tool-call arguments: an object written as a list of parameters in a
//! model's markers (`<parameter=city>Paris</parameter>`) instead of JSON, as the chat
//! templates of Qwen 3.5, GLM 4.7, DeepSeek V3.2, MiniMax, Kimi K3 and Cohere write them
//! (XGrammar's `style` of a `json_schema` format; the layouts below are read from the
//! grammars XGrammar builds for each style).
//!
//! The same translation decides every value: an XML layout only changes how an object's
//! members, and (for the styles that nest, [`XmlStyle::nests`]) arrays' items, are
//! written. Where a value is written as XML, its value rule is built at a [`Place`] other
//! than JSON, so the memoized rules of a JSON value and of the same schema written as
//! XML stay apart:
//!
//! - the top object is written as parameters ([`Place::XmlObject`]), whitespace between
//!   them;
//! - a parameter's value is built once per *part* of the style ([`XmlStyle::parts`]):
//!   the kinds of value one marker writes (DeepSeek says `string="true"` for a string,
//!   `string="false"` for the others). A string is written raw: its characters as they
//!   are, no quotes or escapes, never holding the style's closing marker (which would end
//!   it); the whole text between the markers is the value, so no whitespace is allowed
//!   around it. Other values are JSON text, with whitespace around them where the style
//!   allows it;
//! - in a nesting style (MiniMax M3, Cohere) objects inside are parameters too, and
//!   arrays are lists of items in markers; elsewhere they are JSON.
//!
//! The pythonic style (Llama 4) is no XML but fits the same frame: the top object is
//! keyword arguments, every value a Python literal (see [`XmlStyle::Pythonic`]).
//!
//! Only named keys are written: an object open to other keys (`additionalProperties`,
//! `patternProperties`) writes its named ones, with a warning, since a reader could not
//! tell a repeated key from a new one without reading the layout.

use serde_json::Value;

use super::expr::{alt, lit, rule, seq, AT};
use super::shape::Kinds;
use super::Translator;
use crate::error::Result;
use crate::frontend::ast::{Distinct, Expr, PermEntry};

/// An XML layout of an object's members (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum XmlStyle {
    /// Qwen 3.5, Qwen3-Coder: `<parameter=KEY>VALUE</parameter>`.
    Qwen,
    /// MiniMax M2: `<parameter name="KEY">VALUE</parameter>`.
    Minimax,
    /// MiniMax M3, nesting: `]<]minimax[>[<KEY>VALUE]<]minimax[>[</KEY>`, items
    /// `]<]minimax[>[<item>…]<]minimax[>[</item>`.
    MinimaxM3,
    /// DeepSeek V3.2: `<｜DSML｜parameter name="KEY" string="true|false">VALUE</｜DSML｜parameter>`.
    Deepseek,
    /// DeepSeek V4.1: as V3.2 with `<｜DSML｜ parameter` (a space after the marker).
    DeepseekV41,
    /// GLM 4.7: `<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>`.
    Glm,
    /// Cohere, nesting: `<cofl:value name="KEY" type="raw|json|dict|list">VALUE</cofl:value>`,
    /// keys escaped as XML attributes, items `<cofl:value type="…">…</cofl:value>`.
    Cohere,
    /// Kimi K3: `<|open|>argument key="KEY" type="TYPE"<|sep|>VALUE<|close|>argument<|sep|>`.
    KimiK3,
    /// Llama 4's pythonic calls (no XML; a corral style, not XGrammar's): Python keyword
    /// arguments `KEY=VALUE, KEY=VALUE`, each value a Python literal (JSON text with
    /// `True`, `False` and `None`; a JSON string is a Python string of the same value).
    Pythonic,
}

/// How a part's values sit between its markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pad {
    /// Strings, raw: the whole text between the markers.
    Raw,
    /// JSON text (or, nesting, parameters and items) with whitespace around it.
    Spaced,
    /// JSON text with nothing around it.
    Tight,
}

/// One part of a style: the kinds of value written with one marker.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Part {
    pub kinds: Kinds,
    /// The type attribute's text ("" for styles without one).
    pub attr: &'static str,
    pub pad: Pad,
}

const STR_ONLY: Kinds = Kinds::STR;
const NOT_STR: Kinds = Kinds::ALL.without(Kinds::STR);

impl XmlStyle {
    /// The style of XGrammar's `style` name (None: `"json"` or unknown).
    pub fn from_name(name: &str) -> Option<XmlStyle> {
        Some(match name {
            "qwen_xml" => XmlStyle::Qwen,
            "minimax_xml" => XmlStyle::Minimax,
            "minimax_m3_xml" => XmlStyle::MinimaxM3,
            "deepseek_xml" => XmlStyle::Deepseek,
            "deepseek_v4_1_xml" => XmlStyle::DeepseekV41,
            "glm_xml" => XmlStyle::Glm,
            "cohere_xml" => XmlStyle::Cohere,
            "kimi_k3_xml" => XmlStyle::KimiK3,
            "pythonic" => XmlStyle::Pythonic,
            _ => return None,
        })
    }

    /// The style names corral writes, for messages.
    pub const NAMES: [&'static str; 9] = [
        "qwen_xml",
        "minimax_xml",
        "minimax_m3_xml",
        "deepseek_xml",
        "deepseek_v4_1_xml",
        "glm_xml",
        "cohere_xml",
        "kimi_k3_xml",
        "pythonic",
    ];

    /// The fixed pieces of the style's markers (where a vocabulary has special tokens for
    /// them, see [`crate::structural::StructuralTag::markers`]).
    pub fn markers(self) -> &'static [&'static str] {
        match self {
            XmlStyle::Qwen => &["<parameter=", "</parameter>"],
            XmlStyle::Minimax => &["<parameter name=\"", "</parameter>"],
            XmlStyle::MinimaxM3 => &[M3_MARK],
            XmlStyle::Deepseek => &["<｜DSML｜parameter name=\"", "</｜DSML｜parameter>"],
            XmlStyle::DeepseekV41 => &["<｜DSML｜ parameter name=\"", "</｜DSML｜ parameter>"],
            XmlStyle::Glm => &["<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"],
            XmlStyle::Cohere => &["<cofl:value", "</cofl:value>"],
            XmlStyle::KimiK3 => &["<|open|>argument key=\"", "\"<|sep|>", "<|close|>argument<|sep|>"],
            XmlStyle::Pythonic => &[],
        }
    }

    /// Are strings written raw between markers (else as quoted literals)?
    pub(crate) fn raw_strings(self) -> bool {
        self != XmlStyle::Pythonic
    }

    /// Are `null`, `true` and `false` spelled as Python spells them?
    pub(crate) fn python_literals(self) -> bool {
        self == XmlStyle::Pythonic
    }

    /// Are objects and arrays inside a parameter written as XML too (else as JSON)?
    pub fn nests(self) -> bool {
        matches!(self, XmlStyle::MinimaxM3 | XmlStyle::Cohere)
    }

    /// The parts of a value (see [`Part`]).
    pub(crate) fn parts(self) -> &'static [Part] {
        const fn part(kinds: Kinds, attr: &'static str, pad: Pad) -> Part {
            Part { kinds, attr, pad }
        }
        const PLAIN: [Part; 2] = [part(STR_ONLY, "", Pad::Raw), part(NOT_STR, "", Pad::Spaced)];
        const M3: [Part; 2] = [part(STR_ONLY, "", Pad::Raw), part(NOT_STR, "", Pad::Tight)];
        const DEEPSEEK: [Part; 2] = [part(STR_ONLY, "true", Pad::Raw), part(NOT_STR, "false", Pad::Spaced)];
        const COHERE: [Part; 4] = [
            part(STR_ONLY, "raw", Pad::Raw),
            part(Kinds::NUMBER.or(Kinds::BOOL).or(Kinds::NULL), "json", Pad::Spaced),
            part(Kinds::OBJ, "dict", Pad::Spaced),
            part(Kinds::ARR, "list", Pad::Spaced),
        ];
        const PYTHONIC: [Part; 1] = [part(Kinds::ALL, "", Pad::Tight)];
        const KIMI: [Part; 6] = [
            part(STR_ONLY, "string", Pad::Raw),
            part(Kinds::NUMBER, "number", Pad::Spaced),
            part(Kinds::BOOL, "boolean", Pad::Spaced),
            part(Kinds::OBJ, "object", Pad::Spaced),
            part(Kinds::ARR, "array", Pad::Spaced),
            part(Kinds::NULL, "null", Pad::Spaced),
        ];
        match self {
            XmlStyle::Qwen | XmlStyle::Minimax | XmlStyle::Glm => &PLAIN,
            XmlStyle::MinimaxM3 => &M3,
            XmlStyle::Deepseek | XmlStyle::DeepseekV41 => &DEEPSEEK,
            XmlStyle::Cohere => &COHERE,
            XmlStyle::KimiK3 => &KIMI,
            XmlStyle::Pythonic => &PYTHONIC,
        }
    }

    /// The text a raw string may not hold: it would end the value (none for the
    /// pythonic style, whose strings are quoted).
    pub fn closing(self) -> &'static str {
        match self {
            XmlStyle::Pythonic => "",
            XmlStyle::Qwen | XmlStyle::Minimax => "</parameter>",
            XmlStyle::MinimaxM3 => M3_MARK,
            XmlStyle::Deepseek => "</｜DSML｜parameter>",
            XmlStyle::DeepseekV41 => "</｜DSML｜ parameter>",
            XmlStyle::Glm => "</arg_value>",
            XmlStyle::Cohere => "</cofl:value>",
            XmlStyle::KimiK3 => "<|close|>argument<|sep|>",
        }
    }

    /// The text a key may not hold: a reader would end the key there (None: keys are
    /// escaped).
    pub fn key_end(self) -> Option<&'static str> {
        match self {
            XmlStyle::Qwen | XmlStyle::MinimaxM3 => Some(">"),
            XmlStyle::Minimax | XmlStyle::Deepseek | XmlStyle::DeepseekV41 | XmlStyle::KimiK3 => Some("\""),
            XmlStyle::Glm => Some("</arg_key>"),
            XmlStyle::Cohere | XmlStyle::Pythonic => None,
        }
    }

    /// The opening marker of parameter `key` with type attribute `attr`, as text pieces
    /// with whitespace between them (GLM allows it between key and value).
    fn open(self, key: &str, attr: &str) -> Vec<String> {
        match self {
            XmlStyle::Qwen => vec![format!("<parameter={key}>")],
            XmlStyle::Minimax => vec![format!("<parameter name=\"{key}\">")],
            XmlStyle::MinimaxM3 => vec![format!("{M3_MARK}<{key}>")],
            XmlStyle::Deepseek => vec![format!("<｜DSML｜parameter name=\"{key}\" string=\"{attr}\">")],
            XmlStyle::DeepseekV41 => vec![format!("<｜DSML｜ parameter name=\"{key}\" string=\"{attr}\">")],
            XmlStyle::Glm => vec![format!("<arg_key>{key}</arg_key>"), "<arg_value>".to_string()],
            XmlStyle::Cohere => vec![format!("<cofl:value name=\"{}\" type=\"{attr}\">", escape_attribute(key))],
            XmlStyle::KimiK3 => vec![format!("<|open|>argument key=\"{key}\" type=\"{attr}\"<|sep|>")],
            XmlStyle::Pythonic => vec![format!("{key}=")],
        }
    }

    /// The closing marker of parameter `key`.
    fn close(self, key: &str) -> String {
        match self {
            XmlStyle::MinimaxM3 => format!("{M3_MARK}</{key}>"),
            other => other.closing().to_string(),
        }
    }

    /// An array item's opening and closing markers (nesting styles).
    fn item(self, attr: &str) -> (String, String) {
        match self {
            XmlStyle::Cohere => (format!("<cofl:value type=\"{attr}\">"), self.closing().to_string()),
            _ => (format!("{M3_MARK}<item>"), format!("{M3_MARK}</item>")),
        }
    }

    /// Whitespace between an array's items (Cohere writes them back to back).
    fn spaced_items(self) -> bool {
        !matches!(self, XmlStyle::Cohere)
    }
}

/// What follows the values of `part` written before `close` (a parameter's or an item's
/// closing text): `close`, less the style's closing marker where the part's values are
/// raw strings, which end with it (see `Translator::emit_raw_string`). Every closing text
/// of a style with raw strings starts with its marker (a test checks it).
fn part_close(style: XmlStyle, part: Part, close: &str) -> Expr {
    let rest = match part.pad {
        Pad::Raw if style.raw_strings() => close.strip_prefix(style.closing()).unwrap_or(close),
        _ => close,
    };
    if rest.is_empty() {
        Expr::Empty
    } else {
        lit(rest)
    }
}

/// The marker every MiniMax M3 tag starts with.
const M3_MARK: &str = "]<]minimax[>[";

/// Python's keywords, which no keyword argument may be named.
const PYTHON_KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif", "else",
    "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
    "return", "try", "while", "with", "yield",
];

/// Can `key` be a keyword argument of a call the servers' pythonic parsers read (an ASCII
/// letter, then ASCII letters, digits and `_`; no keyword)?
pub(crate) fn is_keyword_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !PYTHON_KEYWORDS.contains(&key)
}

/// `text` as an XML attribute value: `& < > "` as entities.
fn escape_attribute(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// Where a value rule's value is written (part of its memoization key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) enum Place {
    /// As JSON.
    #[default]
    Json,
    /// The top object, as parameters.
    XmlObject,
    /// A parameter's value or an item, of the given kinds (one part of the style).
    XmlValue(Kinds),
}

impl<'a> Translator<'a> {
    /// The XML style in force where the value being built is written (None: JSON).
    pub(crate) fn xml_here(&self) -> Option<XmlStyle> {
        self.opts.xml.filter(|_| self.pass.place != Place::Json)
    }

    /// Is the container being built written as XML (parameters or items)?
    pub(crate) fn xml_container(&self) -> Option<XmlStyle> {
        match self.pass.place {
            Place::XmlObject => self.opts.xml,
            Place::XmlValue(_) => self.opts.xml.filter(|s| s.nests()),
            Place::Json => None,
        }
    }

    /// Whitespace where a layout allows it.
    fn xml_space(&self) -> Expr {
        match self.ws_body() {
            Some(_) => rule("ws"),
            None => Expr::Empty,
        }
    }

    /// The separators of an object written as parameters, or of a nesting style's list:
    /// whitespace after the members (each member starts with its own, see
    /// [`Translator::xml_lead`]: a `perm!` separator may not be empty).
    pub(crate) fn xml_separators(&self, style: XmlStyle, list: bool) -> super::Separators {
        if style == XmlStyle::Pythonic {
            // `a=1, b=2`: a comma, whitespace after it.
            let comma = seq(vec![lit(","), self.xml_space()]);
            return super::Separators { open: Expr::Empty, close: Expr::Empty, comma, colon: Expr::Empty };
        }
        let ws = if list && !style.spaced_items() { Expr::Empty } else { self.xml_space() };
        super::Separators { open: Expr::Empty, close: ws, comma: Expr::Empty, colon: Expr::Empty }
    }

    /// The whitespace before a parameter (or a spaced list's item).
    fn xml_lead(&self, style: XmlStyle, list: bool) -> Expr {
        if (list && !style.spaced_items()) || style == XmlStyle::Pythonic {
            Expr::Empty
        } else {
            self.xml_space()
        }
    }

    /// Parameter `key` with a value obeying `subs` (None: no value can be written).
    /// `pointer`: the object's schema, for errors.
    pub(crate) fn xml_member(
        &mut self,
        style: XmlStyle,
        key: &str,
        subs: &[super::Sub<'a>],
        depth: usize,
        pointer: &str,
    ) -> Result<Option<Expr>> {
        if style == XmlStyle::Pythonic && !is_keyword_name(key) {
            return Err(Self::invalid(
                pointer,
                "properties",
                &format!(
                    "the key {key:?} is no Python keyword argument (a letter, then letters, digits and _; no keyword): \
                     the pythonic style writes it as one"
                ),
            ));
        }
        if let Some(end) = style.key_end().filter(|end| key.contains(end)) {
            return Err(Self::invalid(
                pointer,
                "properties",
                &format!("the key {key:?} holds {end:?}, which ends a key in the XML style: a reader would cut it there"),
            ));
        }
        let close = style.close(key);
        let mut members: Vec<Option<Expr>> = Vec::new();
        // Parts that share an opening marker are one alternative after it.
        let mut grouped: Vec<(&'static str, Vec<Option<Expr>>)> = Vec::new();
        for part in style.parts() {
            let body = self.xml_part_body(style, *part, subs, depth)?.map(|b| seq(vec![b, part_close(style, *part, &close)]));
            match grouped.iter_mut().find(|(attr, _)| *attr == part.attr) {
                Some((_, bodies)) => bodies.push(body),
                None => grouped.push((part.attr, vec![body])),
            }
        }
        for (attr, bodies) in grouped {
            let Some(body) = alt(bodies) else { continue };
            let mut open: Vec<Expr> = vec![self.xml_lead(style, false)];
            for (i, piece) in style.open(key, attr).iter().enumerate() {
                if i > 0 {
                    open.push(self.xml_space());
                }
                open.push(lit(piece));
            }
            members.push(Some(seq(open.into_iter().chain([body]).collect())));
        }
        Ok(alt(members))
    }

    /// An array item obeying `subs` in a nesting style's list (None: none can be written).
    pub(crate) fn xml_item(&mut self, style: XmlStyle, subs: &[super::Sub<'a>], depth: usize) -> Result<Option<Expr>> {
        let mut items = Vec::new();
        for part in style.parts() {
            let Some(body) = self.xml_part_body(style, *part, subs, depth)? else { continue };
            let (open, close) = style.item(part.attr);
            items.push(Some(seq(vec![self.xml_lead(style, true), lit(&open), body, part_close(style, *part, &close)])));
        }
        Ok(alt(items))
    }

    /// The rule of an array item obeying `subs`: in a nesting style's list, the item in
    /// its markers; else the value rule.
    pub(crate) fn item_rule(&mut self, subs: &[super::Sub<'a>], depth: usize) -> Result<Option<String>> {
        let Some(style) = self.xml_container() else { return self.value_rule(subs, depth) };
        let Some(body) = self.xml_item(style, subs, depth)? else { return Ok(None) };
        let name = self.fresh_base("xi");
        self.add_rule(name.clone(), body);
        Ok(Some(name))
    }

    /// The values of one part, laid out between its markers (None: none).
    fn xml_part_body(&mut self, style: XmlStyle, part: Part, subs: &[super::Sub<'a>], depth: usize) -> Result<Option<Expr>> {
        let Some(value) = self.value_rule_in(subs, depth, Place::XmlValue(part.kinds))? else { return Ok(None) };
        let value = rule(&value);
        // A JSON value inside the layout is a region the repeated-key check reads as JSON
        // (dropped again in `assemble` when no object is open to other keys).
        let json = !style.nests() && part.pad != Pad::Raw && self.opts.json_region && !style.python_literals();
        let value = if json {
            let entries = vec![PermEntry { expr: value, required: true, repeat: false, distinct: Distinct::Json }];
            Expr::Perm { sep: Box::new(Expr::Empty), entries, min: 1, max: Some(1), pos: AT }
        } else {
            value
        };
        Ok(Some(match part.pad {
            Pad::Raw | Pad::Tight => value,
            Pad::Spaced => seq(vec![self.xml_space(), value, self.xml_space()]),
        }))
    }

    /// Raw strings: is a `const`/`enum` string member writable in the style here (it may
    /// not hold the closing marker)?
    pub(crate) fn xml_raw_ok(&self, s: &str) -> bool {
        self.xml_here().is_none_or(|style| !style.raw_strings() || !s.contains(style.closing()))
    }

    /// The kinds a value written here may have (all, in JSON).
    pub(crate) fn kinds_here(&self) -> Kinds {
        match self.pass.place {
            Place::Json => Kinds::ALL,
            Place::XmlObject => Kinds::OBJ,
            Place::XmlValue(k) => k,
        }
    }

    /// Is an enum member `v` of a kind written here?
    pub(crate) fn member_here(&self, v: &Value) -> bool {
        !super::value::kind_of(v).and(self.kinds_here()).is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raw string's value ends with its style's closing marker (`part_close` takes it
    /// off what follows): every closing text of a part with raw strings starts with it.
    #[test]
    fn closing_texts_start_with_the_raw_strings_marker() {
        let raw: Vec<&str> = XmlStyle::NAMES.into_iter().filter(|n| *n != "pythonic").collect();
        assert_eq!(raw.len(), 8);
        for name in raw {
            let style = XmlStyle::from_name(name).expect("a style of the list");
            assert!(style.raw_strings() && !style.closing().is_empty(), "{name}");
            assert!(style.close("city").starts_with(style.closing()), "{name}");
            // Items have markers of their own only where values nest.
            for part in style.parts().iter().filter(|p| p.pad == Pad::Raw && style.nests()) {
                assert!(style.item(part.attr).1.starts_with(style.closing()), "{name}");
            }
        }
    }
}
