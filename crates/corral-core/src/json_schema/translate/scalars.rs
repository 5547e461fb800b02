//! The values of scalar shapes: numbers (bounds digit by digit, `multipleOf` as an
//! automaton), strings (lengths, patterns, formats, excluded values) and `enum` members,
//! each written with the languages of `json_schema::numbers`, `ecma` and `formats`, as
//! grammar terms built directly rather than as EBNF text.

use crate::util::hash::{HashMap, HashSet, HashSetExt};
use std::cell::RefCell;
use std::sync::Arc;

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, Repetition};
use serde_json::{Map, Value};

use super::super::ecma::{self, ValueMatcher};
use super::super::formats;
use super::super::numbers::{self, Decimal};
use super::super::resources;
use super::expr::{alt, hir, lit, repeat, rule, seq, AT};
use super::lang::Lang;
use super::shape::{CountField, Kinds, Shape};
use super::{value, Translator, XmlStyle, REGEX_FORMAT};
use crate::automata::{Dfa, DEAD};
use crate::error::{Error, Result, SchemaErrorKind};
use crate::frontend::ast::{Distinct, Expr, PermEntry};
use crate::limits::Limits;
use crate::util::interrupt;

/// Plain strings whose length bound passes this many characters are written in chunks:
/// one automaton for the whole bound would need about 14 states per character.
pub(crate) const LONG_STRING: u64 = 2048;
/// The characters of one chunk of a long string.
pub(crate) const STRING_CHUNK: u64 = 1024;

/// The characters numbers are written with (the `multipleOf` product reads only these).
const NUMBER_ALPHABET: &[u8] = b"-0123456789.";

/// What the scalar emitters and value checks build once per translation: pattern
/// languages, matchers of decoded strings, and `multipleOf` products.
#[derive(Default)]
pub(crate) struct ScalarCache {
    /// ECMAScript pattern → the encoded characters of the strings it finds a match in.
    patterns: HashMap<String, Lang>,
    /// ECMAScript pattern → its matcher of decoded strings.
    pub(super) pattern_matchers: HashMap<String, Arc<ValueMatcher>>,
    /// Format name → the automaton of its decoded values.
    pub(super) format_matchers: HashMap<String, Arc<Dfa>>,
    /// Canonical name of a product → the product (None: no number).
    products: HashMap<String, Option<Lang>>,
}

// --- small HIR pieces ------------------------------------------------------------------

/// `sub{min,max}` (`max` None: unbounded).
fn rep(sub: Hir, min: u32, max: Option<u32>) -> Hir {
    Hir::repetition(Repetition { min, max, greedy: true, sub: Box::new(sub) })
}

/// One digit from `lo` to `hi`.
fn digits(lo: char, hi: char) -> Hir {
    Hir::class(Class::Unicode(ClassUnicode::new([ClassUnicodeRange::new(lo, hi)])))
}

/// `(?:\.0+)?`: the fraction an integer may be written with when `integer_fraction` holds.
fn zero_fraction() -> Hir {
    rep(Hir::concat(vec![Hir::literal(*b"."), rep(Hir::literal(*b"0"), 1, None)]), 0, Some(1))
}

/// `-?(?:0|[1-9][0-9]*)(?:\.0+)?`: the spellings of integral values without an exponent.
fn integral() -> Hir {
    Hir::concat(vec![numbers::integer(), zero_fraction()])
}

/// `-?(?:0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*`: numbers with a fraction, no exponent.
fn fractional() -> Hir {
    let any = || rep(digits('0', '9'), 0, None);
    Hir::concat(vec![numbers::integer(), Hir::literal(*b"."), any(), digits('1', '9'), any()])
}

/// A count as a repetition bound (counts are checked against the limits before).
fn count(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `n` characters in their JSON encoding, `min` to `max` of them.
fn json_chars(min: u64, max: Option<u64>) -> Hir {
    rep(ecma::json_any_char_hir(), count(min), max.map(count))
}

impl<'a> Translator<'a> {
    // --- numbers ------------------------------------------------------------------

    /// The numbers of `shape` (None: none).
    pub(crate) fn emit_number(&mut self, shape: &Shape<'a>) -> Result<Option<Expr>> {
        Ok(self.number_lang(shape)?.map(Lang::into_expr))
    }

    /// The language of [`Translator::emit_number`].
    pub(crate) fn number_lang(&mut self, shape: &Shape<'a>) -> Result<Option<Lang>> {
        let kinds = shape.kinds.and(Kinds::NUMBER);
        // The draft of the subschema that said "integer" decides (a resource may have its own).
        let suffix = self.opts.integer_fraction && !shape.int_without_fraction;
        let excluded: Vec<Decimal> = shape.not_values.iter().filter_map(|v| value::number(v)).collect();
        let stepped = !shape.mults.is_empty() || !shape.neg_mults.is_empty();
        if shape.lo.is_none() && shape.hi.is_none() && !stepped && excluded.is_empty() {
            return self.unconstrained_number(kinds, suffix);
        }
        let mut terms = Vec::new();
        let mut negs = Vec::new();
        if kinds == Kinds::INT {
            let Some(range) = self.integer_range(shape)? else { return Ok(None) };
            terms.push(Lang::hir(if suffix { Hir::concat(vec![range, zero_fraction()]) } else { range }));
        } else {
            if kinds == Kinds::FRAC {
                negs.push(Lang::hir(integral()));
            }
            if let Some((lo, lo_excl)) = &shape.lo {
                if let Some((hi, hi_excl)) = &shape.hi {
                    if lo > hi || (lo == hi && (*lo_excl || *hi_excl)) {
                        return Ok(None);
                    }
                }
                terms.push(Lang::hir(numbers::decimal_ge(lo, *lo_excl, &self.limits)?));
            }
            if let Some((hi, hi_excl)) = &shape.hi {
                terms.push(Lang::hir(numbers::decimal_le(hi, *hi_excl, &self.limits)?));
            }
            // A bound's language holds plain decimals only, so the generic number is
            // needed only without one (one intersection fewer).
            if terms.is_empty() {
                terms.push(Lang::hir(numbers::plain_number()));
            }
        }
        if self.opts.indent.is_some() {
            // Bounds and steps are plain decimals: the canonical ones without an exponent.
            terms.push(Lang::hir(numbers::canonical_plain_number()));
        }
        for d in &excluded {
            negs.push(Lang::hir(numbers::canonical_forms(d, &self.limits)?));
        }
        if stepped {
            return self.emit_multiples(shape, terms, negs);
        }
        self.langs.bool_terms(terms, negs, &self.limits)
    }

    /// The numbers of `kinds` with no bound, step or excluded value; with an indent, only
    /// their canonical spellings (`json.dumps` of what `json.loads` reads), within which
    /// integers and fractions are told apart by their spelling.
    fn unconstrained_number(&mut self, kinds: Kinds, suffix: bool) -> Result<Option<Lang>> {
        let int_only = kinds == Kinds::INT;
        let one = |h: Hir| Ok(Some(Lang::hir(h)));
        if self.opts.indent.is_none() {
            return match kinds {
                k if k == Kinds::NUMBER => one(numbers::number()),
                _ if int_only && suffix => one(integral()),
                _ if int_only => one(numbers::integer()),
                _ => one(fractional()),
            };
        }
        if kinds == Kinds::NUMBER {
            return one(numbers::canonical_number());
        }
        if int_only && !suffix {
            return one(numbers::canonical_integer());
        }
        let (terms, negs) = if int_only {
            (vec![Lang::hir(integral()), Lang::hir(numbers::canonical_plain_number())], Vec::new())
        } else {
            let negs = vec![Lang::hir(integral()), Lang::hir(numbers::canonical_exp_integral())];
            (vec![Lang::hir(numbers::canonical_number())], negs)
        };
        self.langs.bool_terms(terms, negs, &self.limits)
    }

    /// The canonical integers within `shape`'s bounds (None: there is none).
    fn integer_range(&self, shape: &Shape<'a>) -> Result<Option<Hir>> {
        let lo = shape.lo.as_ref().map(|(v, excl)| self.integer_bound(v, *excl, true)).transpose()?;
        let hi = shape.hi.as_ref().map(|(v, excl)| self.integer_bound(v, *excl, false)).transpose()?;
        numbers::int_range(lo.as_ref(), hi.as_ref(), &self.limits)
    }

    /// An inclusive bound on integers from a bound on numbers: an exclusive integral bound
    /// moves by one (a bound with a fraction already excludes itself; `int_range` rounds
    /// it). A bound too long to write is left as it is: `int_range` refuses it.
    fn integer_bound(&self, v: &Decimal, exclusive: bool, lower: bool) -> Result<Decimal> {
        if !exclusive || !v.is_integer() || v.digit_span() > self.limits.max_dfa_states as u64 {
            return Ok(v.clone());
        }
        if v.is_zero() {
            return Ok(Decimal::from_i64(if lower { 1 } else { -1 }));
        }
        // Away from zero when moving in the direction of the sign, else towards it.
        let (int, _) = v.split();
        let magnitude = if lower != v.is_negative() { add_one(&int) } else { sub_one(&int) };
        let sign = if v.is_negative() { "-" } else { "" };
        Decimal::parse(&format!("{sign}{magnitude}")).ok_or_else(|| Error::Internal(format!("the integer next to {v}")))
    }

    /// Numbers with `multipleOf`: one automaton, the product of the terms, the excluded
    /// spellings and each step's residue automaton (a residue automaton has no short
    /// regular expression: 7 states make ~20 KB of regex).
    fn emit_multiples(&mut self, shape: &Shape<'a>, terms: Vec<Lang>, negs: Vec<Lang>) -> Result<Option<Lang>> {
        let steps: Vec<(&Decimal, &String, bool)> =
            (shape.mults.iter().map(|(d, p)| (d, p, true))).chain(shape.neg_mults.iter().map(|(d, p)| (d, p, false))).collect();
        let key = format!(
            "num!({};not!({});mult!({}))",
            terms.iter().map(Lang::key).collect::<Vec<_>>().join(","),
            negs.iter().map(Lang::key).collect::<Vec<_>>().join("|"),
            steps.iter().map(|(d, _, pos)| format!("{}{d}", if *pos { "" } else { "!" })).collect::<Vec<_>>().join(",")
        );
        if let Some(found) = self.scalars.products.get(&key) {
            return Ok(found.clone());
        }
        let mut parts: Vec<(Arc<Dfa>, bool)> = Vec::new();
        for (langs, positive) in [(&terms, true), (&negs, false)] {
            for l in langs {
                parts.push((self.langs.dfa(l, &self.limits)?, positive));
            }
        }
        for (step, pointer, positive) in &steps {
            parts.push((Arc::new(self.residue_dfa(step, pointer)?), *positive));
        }
        let cap = self.limits.max_number_states;
        let limits = Limits { max_dfa_states: cap, ..self.limits.clone() };
        let built = number_product(&parts, &limits).map_err(|e| match e {
            Error::LimitExceeded { limit: "max_dfa_states", .. } => Self::limit_at(
                steps.first().map_or("", |s| s.1.as_str()),
                "",
                "the numbers allowed here, bounds and multipleOf together, need an automaton of too many states",
                "max_number_states",
                cap,
            ),
            other => other,
        })?;
        let lang = built.map(|d| Lang::Dfa(Arc::new(d), key.clone()));
        self.scalars.products.insert(key, lang.clone());
        Ok(lang)
    }

    /// The residue automaton of `multipleOf: step`; a step that needs too many states is
    /// refused at its keyword (`pointer`) as unsupported.
    fn residue_dfa(&self, step: &Decimal, pointer: &str) -> Result<Dfa> {
        numbers::multiple_dfa(step, &self.limits).map_err(|e| match e {
            Error::LimitExceeded { limit: "max_multiple_states", value: cap, .. } => resources::unsupported(
                pointer,
                "multipleOf",
                &format!(
                    "{step} needs more than Limits.max_multiple_states = {cap} residue states (m·(e+2) for a step m·10^-e); raise the limit to allow it"
                ),
            ),
            other => other,
        })
    }

    // --- literals -----------------------------------------------------------------

    /// The spellings of one number (an `enum` or `const` member). With an indent, only
    /// those `json.dumps` writes for what `json.loads` reads from them: the integer (when
    /// the value is one) and `repr` of the float (when that float is the value), each only
    /// if it is one of the plain spellings allowed otherwise. None: no such spelling.
    pub(crate) fn number_literal(&mut self, v: &Value) -> Result<Option<Expr>> {
        let Value::Number(n) = v else { return Ok(None) };
        let d = value::decimal(n);
        let forms = numbers::canonical_forms(&d, &self.limits)?;
        if self.opts.indent.is_none() {
            return Ok(Some(hir(forms)));
        }
        let allowed = crate::frontend::regex::compile_hir(&forms, "the spellings of a number", &self.limits)?;
        let mut spellings = Vec::new();
        if d.is_integer() {
            let (int, _) = d.split();
            spellings.push(format!("{}{int}", if d.is_negative() { "-" } else { "" }));
        }
        // Python's float(d): the float a float member was read as, or the nearest one.
        if let Some(f) = n.as_f64().filter(|f| f.is_finite()) {
            let text = python_float_repr(f);
            if Decimal::parse(&text).as_ref() == Some(&d) {
                spellings.push(text);
            }
        }
        let mut out: Vec<Option<Expr>> = Vec::new();
        for text in dedup(spellings) {
            if allowed.matches(plain_spelling(&text).as_bytes()) {
                out.push(Some(lit(&text)));
            }
        }
        Ok(alt(out))
    }

    /// A JSON value as a literal, with whitespace where the output allows it, laid out
    /// `depth` containers deep with an indent. None: some number in it has no spelling
    /// the output may use (see [`Translator::number_literal`]).
    pub(crate) fn literal_value(&mut self, v: &Value, depth: usize) -> Result<Option<Expr>> {
        if self.opts.indent.is_some() {
            return self.indented_literal(v, depth);
        }
        let ws = self.ws_body().is_some();
        let sep = |t: &str| if ws { seq(vec![rule("ws"), lit(t), rule("ws")]) } else { lit(t) };
        let (open, close, items) = match v {
            Value::Object(m) => ("{", "}", self.object_items(m, &sep(":"), |t, x| t.literal_value(x, 0))?),
            Value::Array(a) => ("[", "]", self.array_items(a, |t, x| t.literal_value(x, 0))?),
            Value::Number(n) => return Ok(Some(hir(numbers::canonical_forms(&value::decimal(n), &self.limits)?))),
            _ => return Ok(Some(lit(&self.scalar_text(v)))),
        };
        let Some(items) = items else { return Ok(None) };
        let pad = || if ws { rule("ws") } else { Expr::Empty };
        if items.is_empty() {
            return Ok(Some(if ws { seq(vec![lit(open), pad(), lit(close)]) } else { lit(&format!("{open}{close}")) }));
        }
        let members = self.members(v.is_object(), items, sep(","));
        Ok(Some(seq(vec![lit(open), pad(), members, pad(), lit(close)])))
    }

    /// The members of a container literal joined by `comma`: an object's in any order
    /// where the output may order keys freely (`property_order="any"`, `spec_exact`), as
    /// one `perm!` of required entries, since an object equals itself in every key order.
    fn members(&self, object: bool, items: Vec<Expr>, comma: Expr) -> Expr {
        let reorder = object && items.len() > 1 && (self.opts.any_order || self.opts.spec_exact);
        if !reorder {
            return joined(items, &comma);
        }
        let n = items.len() as u32;
        let entries =
            items.into_iter().map(|expr| PermEntry { expr, required: true, repeat: false, distinct: Distinct::No }).collect();
        Expr::Perm { sep: Box::new(comma), entries, min: n, max: Some(n), pos: AT }
    }

    /// [`Translator::literal_value`] laid out as `json.dumps(indent=...)` writes it.
    fn indented_literal(&mut self, v: &Value, depth: usize) -> Result<Option<Expr>> {
        let brackets = match v {
            Value::Object(m) if !m.is_empty() => ['{', '}'],
            Value::Array(a) if !a.is_empty() => ['[', ']'],
            Value::Number(_) => return self.number_literal(v),
            _ => return Ok(Some(lit(&value::dump(v)))),
        };
        let s = self.separators(brackets, depth);
        let items = match v {
            Value::Object(m) => self.object_items(m, &s.colon, |t, x| t.literal_value(x, depth + 1))?,
            Value::Array(a) => self.array_items(a, |t, x| t.literal_value(x, depth + 1))?,
            _ => None,
        };
        Ok(items.map(|items| {
            let members = self.members(v.is_object(), items, s.comma.clone());
            seq(vec![s.open, members, s.close])
        }))
    }

    /// The members of an object literal, `"key" colon value` (None: a value has none).
    fn object_items(
        &mut self,
        m: &Map<String, Value>,
        colon: &Expr,
        mut value_of: impl FnMut(&mut Self, &Value) -> Result<Option<Expr>>,
    ) -> Result<Option<Vec<Expr>>> {
        let mut items = Vec::with_capacity(m.len());
        for (k, x) in m {
            let Some(e) = value_of(self, x)? else { return Ok(None) };
            items.push(seq(vec![lit(&value::dump(&Value::String(k.clone()))), colon.clone(), e]));
        }
        Ok(Some(items))
    }

    /// The items of an array literal (None: an item has none).
    fn array_items(
        &mut self,
        a: &[Value],
        mut value_of: impl FnMut(&mut Self, &Value) -> Result<Option<Expr>>,
    ) -> Result<Option<Vec<Expr>>> {
        let mut items = Vec::with_capacity(a.len());
        for x in a {
            let Some(e) = value_of(self, x)? else { return Ok(None) };
            items.push(e);
        }
        Ok(Some(items))
    }

    /// The members of `shape`'s `enum` that satisfy it (None: none).
    pub(crate) fn emit_enum(&mut self, shape: &Shape<'a>) -> Result<Option<Expr>> {
        let members = shape.enumeration.clone().unwrap_or_default();
        let mut seen = HashSet::new();
        let mut parts = Vec::new();
        for v in members {
            interrupt::check()?;
            if !self.check(v, shape, true)? {
                continue;
            }
            if !self.member_here(v) {
                continue;
            }
            let part = match v {
                Value::Number(_) => self.number_literal(v)?,
                Value::Array(_) | Value::Object(_) if self.xml_container().is_some() => {
                    let at = super::shape_pointer(shape);
                    self.unsupported(&at, "enum", "an object or array member written as parameters or items")?;
                    None
                }
                Value::Array(_) | Value::Object(_) => self.literal_value(v, self.pass.json_depth)?,
                // A raw string in an XML layout.
                // A raw string in an XML layout, with the closing marker (see
                // `emit_raw_string`).
                Value::String(s) if self.xml_here().is_some_and(|style| style.raw_strings()) => {
                    let marker = self.xml_here().map_or("", XmlStyle::closing);
                    (self.xml_raw_ok(s) && !self.holds_excluded(s)).then(|| lit(&format!("{s}{marker}")))
                }
                Value::String(s) => (!self.holds_excluded(&value::encoded(s))).then(|| lit(&value::dump(v))),
                _ => Some(lit(&self.scalar_text(v))),
            };
            // `1` and `1.0` are one member: their spellings are one alternative.
            if let Some(p) = part.filter(|p| seen.insert(format!("{p:?}"))) {
                parts.push(Some(p));
            }
        }
        Ok(alt(parts))
    }

    // --- strings ------------------------------------------------------------------

    /// The strings of `shape`, quotes included (None: none).
    pub(crate) fn emit_string(&mut self, shape: &Shape<'a>) -> Result<Option<Expr>> {
        let plain = shape.patterns.is_empty()
            && shape.neg_patterns.is_empty()
            && shape.formats.is_empty()
            && shape.neg_formats.is_empty()
            && !shape.not_values.iter().any(|v| v.is_string());
        let longest = shape.min_len.max(shape.max_len.unwrap_or(0));
        if plain && longest > LONG_STRING && shape.max_len.is_none_or(|m| m >= shape.min_len) && self.opts.excludes.is_empty() {
            self.check_chunks(shape)?;
            return Ok(Some(chunked_string(shape.min_len, shape.max_len)));
        }
        let Some(body) = self.string_body(shape)? else { return Ok(None) };
        match shape.formats.iter().find(|(name, _)| name == REGEX_FORMAT) {
            Some((_, pointer)) => self.regex_strings(shape, body, pointer),
            None => Ok(Some(quoted(body))),
        }
    }

    /// The strings of `shape` written raw in XML style `style`, each followed by the
    /// style's closing marker (None: none): their characters as they are, none holding the
    /// marker (see `xml`).
    ///
    /// The marker is part of the string's language, as a JSON string's closing quote is:
    /// a raw text ends at every character, so alone it would be a terminal that may end
    /// anywhere, and every token inside it would need the parser after each of its bytes
    /// (a walk of the whole vocabulary at each new count of a `maxLength`). A text `x`
    /// followed by the marker `M` is a text whose first `M` is at its end; every
    /// constraint on `x` is read on `x M` (`P` becomes `P M`, a count of `n` characters
    /// one of `n + |M|`), which is exact since `x` is what comes before that first `M`.
    pub(crate) fn emit_raw_string(&mut self, shape: &Shape<'a>, style: XmlStyle) -> Result<Option<Expr>> {
        if shape.max_len.is_some_and(|m| m < shape.min_len) {
            return Ok(None);
        }
        let marker = style.closing();
        let marker_chars = marker.chars().count() as u64;
        let mut terms = vec![Lang::hir(ending_with(marker))];
        let mut negs = vec![Lang::hir(holding_before_end(marker))];
        if shape.min_len > 0 || shape.max_len.is_some() {
            self.check_length_states(shape)?;
            terms.push(Lang::hir(raw_chars(shape.min_len + marker_chars, shape.max_len.map(|m| m + marker_chars))));
        }
        let mut before = Vec::new();
        let mut before_negs = Vec::new();
        for (src, pointer) in &shape.patterns {
            before.extend(self.raw_pattern_lang(src, pointer)?);
        }
        for (src, pointer) in &shape.neg_patterns {
            before_negs.extend(self.raw_pattern_lang(src, pointer)?);
        }
        for (name, pointer) in shape.formats.iter().chain(&shape.neg_formats) {
            if formats::value_pattern(name).is_none() {
                let schema = pointer.strip_suffix("/format").unwrap_or(pointer);
                self.unsupported(schema, "format", &format!("format '{name}' on a raw string of an XML layout"))?;
            }
        }
        before.extend(shape.formats.iter().filter_map(|(name, _)| raw_format_lang(name)));
        before_negs.extend(shape.neg_formats.iter().filter_map(|(name, _)| raw_format_lang(name)));
        for v in &shape.not_values {
            if let Value::String(s) = v {
                before_negs.push(Lang::literal(s));
            }
        }
        before_negs.extend(self.excluded_texts(shape));
        for lang in before {
            terms.push(self.followed_by(lang, marker)?);
        }
        for lang in before_negs {
            negs.push(self.followed_by(lang, marker)?);
        }
        let body = self.langs.bool_terms(terms, negs, &self.limits).map_err(|e| string_limit_at(shape, e))?;
        Ok(body.map(Lang::into_expr))
    }

    /// `lang` followed by `marker`.
    fn followed_by(&mut self, lang: Lang, marker: &str) -> Result<Lang> {
        let what = "a raw string of an XML layout";
        Ok(match lang {
            Lang::Hir(h) => Lang::hir(Hir::concat(vec![h.hir().clone(), Hir::literal(marker.as_bytes())])),
            other => {
                let key = format!("seq({},{marker:?})", other.key());
                let dfa = self.langs.dfa(&other, &self.limits)?;
                let closing = Dfa::literal(marker.as_bytes(), &self.limits, what)?;
                // A format's text rarely starts the marker: one pass then, else subset
                // construction.
                let joined = match dfa.concat(&closing, &self.limits, what)? {
                    Some(d) => d,
                    None => Dfa::from_expr(
                        &crate::automata::DfaExpr::Seq(vec![
                            crate::automata::DfaExpr::Leaf(&dfa),
                            crate::automata::DfaExpr::Leaf(&closing),
                        ]),
                        &self.limits,
                        what,
                    )?,
                };
                Lang::Dfa(Arc::new(joined), key)
            }
        })
    }

    /// The texts that hold one of the options' `excludes`, for the strings of `shape`: none
    /// where a `pattern` or `format` alone decides them (as XGrammar reads `excludes`).
    fn excluded_texts(&self, shape: &Shape<'a>) -> Vec<Lang> {
        if !shape.patterns.is_empty() || !shape.formats.is_empty() {
            return Vec::new();
        }
        self.opts.excludes.iter().map(|x| Lang::hir(containing(x))).collect()
    }

    /// Does an `enum` or `const` string `written` (as the output writes it) hold one of
    /// the options' `excludes`?
    pub(crate) fn holds_excluded(&self, written: &str) -> bool {
        self.opts.excludes.iter().any(|x| written.contains(x.as_str()))
    }

    /// The raw strings in which ECMAScript `pattern` finds a match (None: a look-around,
    /// dropped with a warning where not strict).
    fn raw_pattern_lang(&mut self, pattern: &str, pointer: &str) -> Result<Option<Lang>> {
        let language = ecma::search_language(pattern, &self.limits).map_err(|e| pattern_error(e, pattern, pointer))?;
        if language.has_assertions() {
            let schema = pointer.strip_suffix("/pattern").unwrap_or(pointer);
            self.unsupported(schema, "pattern", "a look-around in the pattern of a raw string of an XML layout")?;
            return Ok(None);
        }
        Ok(Some(Lang::hir(language.value_hir())))
    }

    /// The strings of `shape` whose text must be a regular expression (`format: "regex"`
    /// at `pointer`), `body` holding the rest of their constraints: the grammar writes the
    /// strings of `body`, as the one entry of a `perm!` marked [`Distinct::Regex`], and the
    /// matcher reads their text as a pattern (see [`crate::grammar::regex_text`]).
    ///
    /// Beside a `pattern` or `maxLength`, that pairing could allow a start that the
    /// pattern check and the automaton can each finish, but not both (`((((` with four
    /// characters left): where every string of `body` is a regular expression, the
    /// grammar alone is exact and no check is needed; else the pairing is used where no
    /// such start exists (see [`crate::grammar::regex_text::finishable_everywhere`]);
    /// elsewhere the format is refused. `minLength` and excluded values are fine: a whole
    /// pattern can always be made longer, or other than a few strings.
    fn regex_strings(&mut self, shape: &Shape<'a>, body: Lang, pointer: &str) -> Result<Option<Expr>> {
        let schema = pointer.strip_suffix("/format").unwrap_or(pointer);
        if !shape.patterns.is_empty() || !shape.neg_patterns.is_empty() || shape.max_len.is_some() {
            let dfa = self.langs.dfa(&body, &self.limits)?;
            let cap = self.limits.max_regex_format_states;
            if crate::grammar::regex_text::all_patterns(&dfa, cap)? == Some(true) {
                return Ok(Some(quoted(body)));
            }
            let why = if shape.max_len.is_some() {
                // At the bound, `((` can have no room left for its `))`.
                Some(
                    "format 'regex' beside maxLength: a pattern may reach the bound unfinished (`((` with no room \
                     for `))`), so the two are not enforced together"
                        .to_string(),
                )
            } else {
                self.patterns_apart(&dfa, "a pattern")?
            };
            if let Some(why) = why {
                self.unsupported(schema, "format", &why)?;
                return Ok(Some(quoted(body)));
            }
        }
        Ok(Some(regex_entry(quoted(body))))
    }

    /// Why strings whose bodies automaton `dfa` (`beside`, for the message) allows cannot
    /// be held to being regular expressions by the check beside the parser (None: they
    /// can, see [`crate::grammar::regex_text::finishable_everywhere`]).
    pub(super) fn patterns_apart(&self, dfa: &Dfa, beside: &str) -> Result<Option<String>> {
        let cap = self.limits.max_regex_format_states;
        Ok(match crate::grammar::regex_text::finishable_everywhere(dfa, cap)? {
            Some(true) => None,
            Some(false) => Some(format!(
                "format 'regex' beside {beside} that can leave a regular expression with no way to finish it, so the \
                 two are not enforced together"
            )),
            None => Some(format!(
                "format 'regex' beside {beside}: whether the two can always be finished together was not settled \
                 within Limits.max_regex_format_states = {cap}"
            )),
        })
    }

    /// Each chunk of a long string's bound is one repetition in the grammar: a count past
    /// what the engine may expand is refused here, at its keyword.
    fn check_chunks(&self, shape: &Shape<'a>) -> Result<()> {
        let cap = self.limits.max_grammar_productions;
        for (field, keyword, n) in length_bounds(shape) {
            if n / STRING_CHUNK > cap as u64 {
                return Err(Self::limit_at(
                    &count_pointer(shape, field),
                    keyword,
                    &format!("a length of {n} characters is {} chunks of {STRING_CHUNK} in the grammar", n / STRING_CHUNK),
                    "max_grammar_productions",
                    cap,
                ));
            }
        }
        Ok(())
    }

    /// The encoded characters between the quotes of the strings of `shape` (None: none),
    /// but for `format: "regex"`, which no language says (see `regex_strings`): with it,
    /// a wider language than the strings'.
    pub(crate) fn string_body(&mut self, shape: &Shape<'a>) -> Result<Option<Lang>> {
        if shape.max_len.is_some_and(|m| m < shape.min_len) {
            return Ok(None);
        }
        let mut terms = Vec::new();
        let mut negs = Vec::new();
        if shape.min_len > 0 || shape.max_len.is_some() {
            self.check_length_states(shape)?;
            let constrained = !shape.patterns.is_empty()
                || !shape.neg_patterns.is_empty()
                || shape.formats.iter().any(|(name, _)| name != REGEX_FORMAT)
                || !shape.neg_formats.is_empty()
                || shape.not_values.iter().any(|v| v.is_string());
            match shape.max_len {
                // The bound as a count from 0 (kept as a counted region however short)
                // and the least length apart: the count meets the other constraints as
                // one block of rows (see `automata::counted_product`).
                Some(max) if constrained => {
                    // (A bound past `u32` is refused before: see `check_length_states`.)
                    let max = u32::try_from(max).unwrap_or(u32::MAX);
                    terms.push(self.langs.counted_region(ecma::json_any_char_hir(), max, &self.limits)?);
                    if shape.min_len > 0 {
                        terms.push(Lang::hir(json_chars(shape.min_len, None)));
                    }
                }
                _ => terms.push(Lang::hir(json_chars(shape.min_len, shape.max_len))),
            }
        }
        for (src, pointer) in &shape.patterns {
            terms.push(self.pattern_lang(src, pointer)?);
        }
        for (src, pointer) in &shape.neg_patterns {
            negs.push(self.pattern_lang(src, pointer)?);
        }
        // Regular expressions are checked beside the parser (see `regex_strings`).
        for (name, _) in shape.formats.iter().filter(|(name, _)| name != REGEX_FORMAT) {
            terms.push(format_lang(name)?);
        }
        for (name, _) in &shape.neg_formats {
            negs.push(format_lang(name)?);
        }
        for v in &shape.not_values {
            if let Value::String(s) = v {
                negs.push(Lang::literal(&value::encoded(s)));
            }
        }
        negs.extend(self.excluded_texts(shape));
        if terms.is_empty() {
            terms.push(Lang::hir(json_chars(0, None)));
        }
        self.langs.bool_terms(terms, negs, &self.limits).map_err(|e| string_limit_at(shape, e))
    }

    /// A least length needs at least one automaton state per character: past
    /// `max_dfa_states` it can never be built. A bound is counted, up to 2^27 characters.
    fn check_length_states(&self, shape: &Shape<'a>) -> Result<()> {
        // A least length is states written out; a bound is a count kept as one block of
        // rows (see `automata::counted_product`), whose states are only numbered.
        let cap = self.limits.max_dfa_states;
        let most = |field: CountField| match field {
            CountField::MaxLen => (crate::automata::counted::MAX_REGION_STATES / 16) as u64,
            _ => cap as u64,
        };
        for (field, keyword, n) in length_bounds(shape) {
            if n > most(field) {
                return Err(Self::limit_at(
                    &count_pointer(shape, field),
                    keyword,
                    &format!("a length of {n} characters together with a pattern or format is one automaton of at least that many states"),
                    "max_dfa_states",
                    cap,
                ));
            }
        }
        Ok(())
    }

    /// The JSON-encoded characters of strings in which ECMAScript `pattern` finds a
    /// match; errors name `pointer` (the keyword's).
    /// Can `pattern` (a `pattern` keyword at `pointer`, its schema's pointer + `/pattern`)
    /// be enforced? A construct no automaton has (`\p{...}`, look-around) is reported
    /// like any keyword that cannot be enforced: an error in strict mode, else false and a
    /// warning (the keyword is dropped, the grammar wider).
    pub(crate) fn usable_pattern(&mut self, pattern: &str, pointer: &str) -> Result<bool> {
        let Some(why) = self.droppable_pattern(pattern, pointer)? else { return Ok(true) };
        self.unsupported(pointer.strip_suffix("/pattern").unwrap_or(pointer), "pattern", &why)?;
        Ok(false)
    }

    /// [`Translator::usable_pattern`] for a `patternProperties` pattern (`pointer`: its own).
    pub(crate) fn usable_key_pattern(&mut self, pattern: &str, pointer: &str) -> Result<bool> {
        let Some(why) = self.droppable_pattern(pattern, pointer)? else { return Ok(true) };
        let message = format!("dropped patternProperties at {pointer} (other keys no longer bounded there): {why}");
        if !self.warnings.contains(&message) {
            self.warnings.push(message);
        }
        Ok(false)
    }

    /// Why `pattern` cannot be enforced, where `strict=False` may drop it (None: it can be);
    /// any other failure is the error.
    fn droppable_pattern(&mut self, pattern: &str, pointer: &str) -> Result<Option<String>> {
        match self.pattern_lang(pattern, pointer) {
            Ok(_) => Ok(None),
            Err(Error::Schema { kind: SchemaErrorKind::Unsupported, message, .. }) if !self.opts.strict => {
                Ok(Some(message.split_once(": ").map_or(message.as_str(), |(_, why)| why).to_string()))
            }
            Err(e) => Err(e),
        }
    }

    pub(crate) fn pattern_lang(&mut self, pattern: &str, pointer: &str) -> Result<Lang> {
        if let Some(l) = self.scalars.patterns.get(pattern) {
            return Ok(l.clone());
        }
        let part = |t: &Self, p: &str| -> Result<Lang> {
            let language = ecma::search_language(p, &t.limits).map_err(|e| pattern_error(e, p, pointer))?;
            if !language.has_assertions() {
                return Ok(Lang::hir(language.json_hir()));
            }
            // Look-around: an automaton built beside the HIR (see `ecma::look_around`).
            match language.json_dfa(&t.limits) {
                Ok(d) => Ok(Lang::Dfa(Arc::new(d), format!("ecma:{p}"))),
                Err(Error::EmptyLanguage { .. }) => Ok(Lang::hir(Hir::fail())),
                Err(e) => Err(pattern_error(e, p, pointer)),
            }
        };
        let l = match ecma::leading_lookaheads(pattern) {
            // `^(?=A)(?!B)R`: the strings of `^R` and `^A` and not of `^B`.
            Some(look) => {
                let mut terms = vec![part(self, &look.rest)?];
                let mut negs = Vec::new();
                for (positive, p) in &look.checks {
                    let l = part(self, p)?;
                    if *positive {
                        terms.push(l)
                    } else {
                        negs.push(l)
                    }
                }
                self.langs.bool_terms(terms, negs, &self.limits)?.unwrap_or_else(|| Lang::hir(Hir::fail()))
            }
            None => part(self, pattern)?,
        };
        self.scalars.patterns.insert(pattern.to_string(), l.clone());
        Ok(l)
    }
}

/// An automaton limit hit while building the strings of `shape`, placed at the keyword
/// that makes the automaton large: a length bound when one is set (the automaton counts
/// characters through the pattern's or format's states), else the first pattern or format.
/// Other errors pass through.
fn string_limit_at(shape: &Shape<'_>, e: Error) -> Error {
    let Error::LimitExceeded { limit, value, .. } = e else { return e };
    let others: Vec<String> = shape
        .patterns
        .iter()
        .map(|(src, _)| format!("pattern {src:?}"))
        .chain(shape.formats.iter().map(|(name, _)| format!("format '{name}'")))
        .chain(shape.neg_patterns.iter().map(|(src, _)| format!("not pattern {src:?}")))
        .chain(shape.neg_formats.iter().map(|(name, _)| format!("not format '{name}'")))
        .chain(shape.not_values.iter().any(|v| v.is_string()).then(|| "the strings it excludes".to_string()))
        .collect();
    let beside = others.join(", ");
    // A least length is written out, state by state; a bound is counted (its rows are what
    // count), unless it is short enough to be written out too.
    let counted_from = crate::automata::counted::COUNTED_REGION_FROM as u64 / JSON_CHAR_ROWS;
    let written = |&&(field, _, n): &&(CountField, &str, u64)| match field {
        CountField::MaxLen => n < counted_from,
        _ => n >= LEAST_LENGTH_WORTH_NAMING,
    };
    if let Some(&(field, keyword, n)) = length_bounds(shape).iter().filter(written).max_by_key(|b| b.2) {
        let through = if beside.is_empty() { String::new() } else { format!(" through {beside}") };
        let why = format!("the automaton that counts {n} characters{through}");
        return Translator::limit_at(&count_pointer(shape, field), keyword, &why, limit, value);
    }
    let named = |list: &[(String, String)], keyword: &'static str| list.first().map(|(_, p)| (p.clone(), keyword));
    let (pointer, keyword) = named(&shape.patterns, "pattern")
        .or_else(|| named(&shape.formats, "format"))
        .or_else(|| named(&shape.neg_patterns, "pattern"))
        .or_else(|| named(&shape.neg_formats, "format"))
        .unwrap_or_else(|| (super::shape_pointer(shape), ""));
    let why = format!("the one automaton of {beside}");
    Translator::limit_at(&pointer, keyword, &why, limit, value)
}

/// Automaton rows of one JSON string character (an escape and UTF-8 included): a length
/// bound of `COUNTED_REGION_FROM / JSON_CHAR_ROWS` characters or more is counted, not
/// written out (see [`crate::automata::counted`]).
const JSON_CHAR_ROWS: u64 = 14;

/// A least length from which its states, written out, are worth naming in an error.
const LEAST_LENGTH_WORTH_NAMING: u64 = 64;

/// The bounds on a string's length that are set: (field, keyword, count).
fn length_bounds(shape: &Shape<'_>) -> Vec<(CountField, &'static str, u64)> {
    let mut out = vec![(CountField::MinLen, "minLength", shape.min_len)];
    out.extend(shape.max_len.map(|n| (CountField::MaxLen, "maxLength", n)));
    out
}

/// Where the keyword that set a count is (`/` when unknown).
fn count_pointer(shape: &Shape<'_>, field: CountField) -> String {
    shape.count_ptrs.get(&field).filter(|p| !p.is_empty()).cloned().unwrap_or_else(|| "/".to_string())
}

/// `min` to `max` characters of a raw string (any Unicode scalar value).
fn raw_chars(min: u64, max: Option<u64>) -> Hir {
    rep(Hir::dot(regex_syntax::hir::Dot::AnyChar), count(min), max.map(count))
}

/// The texts that hold `needle`.
pub(super) fn containing(needle: &str) -> Hir {
    let any = || rep(Hir::dot(regex_syntax::hir::Dot::AnyChar), 0, None);
    Hir::concat(vec![any(), Hir::literal(needle.as_bytes()), any()])
}

/// The texts that end with `needle`.
fn ending_with(needle: &str) -> Hir {
    Hir::concat(vec![rep(Hir::dot(regex_syntax::hir::Dot::AnyChar), 0, None), Hir::literal(needle.as_bytes())])
}

/// The texts that hold `needle` somewhere other than at their end (followed by at least
/// one character).
fn holding_before_end(needle: &str) -> Hir {
    let any = |min| rep(Hir::dot(regex_syntax::hir::Dot::AnyChar), min, None);
    Hir::concat(vec![any(0), Hir::literal(needle.as_bytes()), any(1)])
}

/// The characters of format `name`'s strings, decoded (None: a format no pattern says).
fn raw_format_lang(name: &str) -> Option<Lang> {
    formats::value_pattern(name).map(|src| Lang::Regex(src.to_string()))
}

/// The encoded characters of format `name`'s strings, as the fixed pattern the prebuilt
/// table is keyed by.
fn format_lang(name: &str) -> Result<Lang> {
    formats::format_source(name)
        .map(|src| Lang::Regex(src.to_string()))
        .ok_or_else(|| Error::Internal(format!("format {name:?} has no language")))
}

/// A whole JSON string of `body`'s characters: one term when the body is one language
/// (a quoted HIR, or a quoted format in the prebuilt table), else quote, body, quote.
/// `quoted` (JSON strings) as the one entry of a `perm!` marked [`Distinct::Regex`]: the
/// matcher reads each such string's text as a pattern (see [`crate::grammar::regex_text`]).
pub(super) fn regex_entry(quoted: Expr) -> Expr {
    let entries = vec![PermEntry { expr: quoted, required: true, repeat: false, distinct: Distinct::Regex }];
    Expr::Perm { sep: Box::new(Expr::Empty), entries, min: 1, max: Some(1), pos: AT }
}

fn quoted(body: Lang) -> Expr {
    match body {
        Lang::Hir(h) => hir(Hir::concat(vec![Hir::literal(*b"\""), h.hir().clone(), Hir::literal(*b"\"")])),
        Lang::Regex(src) => Lang::Regex(format!("\"{src}\"")).into_expr(),
        dfa @ Lang::Dfa(..) => seq(vec![lit("\""), dfa.into_expr(), lit("\"")]),
    }
}

/// A JSON string of `lo` to `hi` characters (`hi` None: no bound), read as chunks of
/// exactly K = [`STRING_CHUNK`] characters and one last term that holds the rest and the
/// closing quote (so that no term ends inside the text but at a chunk's end).
///
/// With a = lo / K, b = lo % K and, for a bound, q, r = divmod(hi - lo, K):
/// `" B{a} (B{0,q-1} C{b,b+K-1}" | B{q} C{b,b+r}")`: lengths lo + K·j + t (0 <= j < q,
/// 0 <= t < K), then lo + K·q .. hi, each one way only.
fn chunked_string(lo: u64, hi: Option<u64>) -> Expr {
    let k = STRING_CHUNK;
    let chunk = || hir(json_chars(k, Some(k)));
    let rest = |min: u64, max: Option<u64>| hir(Hir::concat(vec![json_chars(min, max), Hir::literal(*b"\"")]));
    let (a, b) = (lo / k, lo % k);
    let head = seq(vec![lit("\""), if a > 0 { repeat(chunk(), count(a), Some(count(a))) } else { Expr::Empty }]);
    let Some(hi) = hi else { return seq(vec![head, rest(b, None)]) };
    let (q, r) = ((hi - lo) / k, (hi - lo) % k);
    let last = rest(b, Some(b + r));
    if q == 0 {
        return seq(vec![head, last]);
    }
    let partial = rest(b, Some(b + k - 1));
    let short = if q > 1 { seq(vec![repeat(chunk(), 0, Some(count(q - 1))), partial]) } else { partial };
    let long = seq(vec![repeat(chunk(), count(q), Some(count(q))), last]);
    seq(vec![head, Expr::Alt(vec![short, long])])
}

/// `items` with `sep` between each two.
fn joined(items: Vec<Expr>, sep: &Expr) -> Expr {
    let mut out = Vec::with_capacity(items.len() * 2);
    for (i, e) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(sep.clone());
        }
        out.push(e);
    }
    seq(out)
}

/// `items` without repeats, in order.
fn dedup(items: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items.into_iter().filter(|s| seen.insert(s.clone())).collect()
}

/// The digits of `digits + 1` (ASCII digits, no leading zero).
fn add_one(digits: &str) -> String {
    let mut out: Vec<u8> = digits.bytes().collect();
    for b in out.iter_mut().rev() {
        if *b == b'9' {
            *b = b'0';
        } else {
            *b += 1;
            return String::from_utf8_lossy(&out).into_owned();
        }
    }
    out.insert(0, b'1');
    String::from_utf8_lossy(&out).into_owned()
}

/// The digits of `digits - 1` for a positive `digits` (no leading zero kept).
fn sub_one(digits: &str) -> String {
    let mut out: Vec<u8> = digits.bytes().collect();
    for b in out.iter_mut().rev() {
        if *b == b'0' {
            *b = b'9';
        } else {
            *b -= 1;
            break;
        }
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    match text.trim_start_matches('0') {
        "" => "0".to_string(),
        t => t.to_string(),
    }
}

/// The strings over [`NUMBER_ALPHABET`] that every positive part accepts and no negative
/// one does, as one minimal automaton (None: no string). States are tuples of the parts'
/// states, numbered as they are met; `limits.max_dfa_states` bounds them.
fn number_product(parts: &[(Arc<Dfa>, bool)], limits: &Limits) -> Result<Option<Dfa>> {
    let mut class_of = [0u8; 256];
    for (i, b) in NUMBER_ALPHABET.iter().enumerate() {
        class_of[*b as usize] = i as u8 + 1;
    }
    let table = RefCell::new(TupleIds::default());
    let start = table.borrow_mut().id(parts.iter().map(|(d, _)| d.start()).collect());
    let next = |s: u32, byte: u8| -> Option<u32> {
        if class_of[byte as usize] == 0 {
            return None;
        }
        let mut out = Vec::with_capacity(parts.len());
        {
            let t = table.borrow();
            for ((d, positive), &q) in parts.iter().zip(&t.tuples[s as usize]) {
                let to = d.next(q, byte);
                if to == DEAD && *positive {
                    return None;
                }
                out.push(to);
            }
        }
        Some(table.borrow_mut().id(out))
    };
    let accepts = |s: u32| {
        let t = table.borrow();
        parts.iter().zip(&t.tuples[s as usize]).all(|((d, positive), &q)| d.is_accepting(q) == *positive)
    };
    match Dfa::from_automaton(start, &class_of, next, accepts, limits, "the numbers of a multipleOf") {
        Ok(d) => Ok(Some(d.minimized())),
        Err(Error::EmptyLanguage { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Tuples of states, numbered as they are met.
#[derive(Default)]
struct TupleIds {
    tuples: Vec<Vec<u32>>,
    ids: HashMap<Vec<u32>, u32>,
}

impl TupleIds {
    fn id(&mut self, tuple: Vec<u32>) -> u32 {
        if let Some(&i) = self.ids.get(&tuple) {
            return i;
        }
        let i = self.tuples.len() as u32;
        self.tuples.push(tuple.clone());
        self.ids.insert(tuple, i);
        i
    }
}

/// The plain spelling of `text` (a float's `repr`): with an exponent, the same number
/// written out, as `format(Decimal(text), "f")` writes it, with `.0` when it has no point.
fn plain_spelling(text: &str) -> String {
    if !text.contains('e') {
        return text.to_string();
    }
    let Some(d) = Decimal::parse(text) else { return text.to_string() };
    let (int, frac) = d.split();
    let sign = if d.is_negative() { "-" } else { "" };
    match frac.is_empty() {
        true => format!("{sign}{int}.0"),
        false => format!("{sign}{int}.{frac}"),
    }
}

/// Python's `repr` of a finite float: the shortest digits that read back as `f`, written
/// out when the decimal exponent is in -4..16, else as `d.ddde±XX`.
pub(crate) fn python_float_repr(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let sign = if mantissa.starts_with('-') { "-" } else { "" };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        let n = digits.len() as i64;
        return if point <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
        } else if point >= n {
            format!("{sign}{digits}{}.0", "0".repeat((point - n) as usize))
        } else {
            format!("{sign}{}.{}", &digits[..point as usize], &digits[point as usize..])
        };
    }
    let mantissa = if digits.len() == 1 { digits } else { format!("{}.{}", &digits[..1], &digits[1..]) };
    format!("{sign}{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// A pattern's error at its keyword: invalid or unsupported, "{message} (at offset
/// {position} of {pattern!r})".
pub(crate) fn pattern_error(e: Error, pattern: &str, pointer: &str) -> Error {
    let why = |message: &str, position: usize| format!("{message} (at offset {position} of {})", super::value::repr(pattern));
    match e {
        Error::RegexSyntax { message, position, .. } => resources::invalid(pointer, "pattern", &why(&message, position)),
        Error::UnsupportedRegex { construct, position, .. } => {
            resources::unsupported(pointer, "pattern", &why(&construct, position))
        }
        Error::LimitExceeded { limit, value, context } => Error::SchemaLimit {
            limit,
            value,
            context: format!("pattern at {pointer}: {context}"),
            pointer: pointer.to_string(),
            keyword: "pattern".to_string(),
        },
        other => other,
    }
}
