//! The values of object shapes: named properties in the schema's order or any order,
//! classes of other keys (patterns, `additionalProperties`, `propertyNames`), required
//! keys and counts.
//!
//! [`Translator::object_layout`] sorts keys into named ones (each with the subschemas its
//! value obeys) and classes of other keys (a regular language of encoded keys each). In
//! the schema's order, an object is a chain of states (named key `i`, `c` members so far)
//! ending with the classes' members; in any order, it is one `perm!`. An object that must
//! have some key outside some names with a value breaking a schema (a negated
//! `additionalProperties` on an open object) is one alternative per named key, and one
//! whose classes must hold such a member ([`Translator::object_with_bad_members`]).

use crate::util::hash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::collections::hash_map::Entry;
use std::sync::Arc;

use regex_syntax::hir::{Hir, Repetition};
use serde_json::Value;

use super::expr::{alt, lit, opt, repeat, rule, seq, AT};
use super::lang::{self, Lang};
use super::scalars::regex_entry;
use super::shape::{CountField, KeyFilter, Kinds, ObjClause, Shape, Sub, SubNode};
use super::value::{dump, encoded};
use super::{shape_pointer, Separators, Translator, REGEX_FORMAT};
use crate::automata::{Dfa, DfaExpr};
use crate::error::{Error, Result};
use crate::frontend::ast::{Distinct, Expr, PermEntry};
use crate::json_schema::ecma::json_any_char_hir;
use crate::json_schema::resources::{Subschema, ROOT_URI};

/// A key class with at most this many keys is written as named keys (each at most once);
/// a larger one stays an open class, whose keys the matcher keeps distinct.
pub(crate) const MAX_ENUMERATED_KEYS: usize = 256;

/// A chain state's body larger than this many expression nodes becomes a rule of its own:
/// each state is written into two others, so inlined bodies would double with every key.
const INLINE_NODES: usize = 6;

/// The schemas `true` and `false`, for the clause that closes an object (see
/// [`Translator::obj_clauses`]).
static TRUE: Value = Value::Bool(true);
static FALSE: Value = Value::Bool(false);

/// How an object shape's keys are written (see [`Translator::object_layout`]).
#[derive(Debug)]
pub(crate) struct ObjectLayout<'a> {
    /// The named keys, in order: properties, then required names, then the keys of
    /// finite classes.
    pub names: Vec<String>,
    /// The subschemas each named key's value obeys (None: the key may not appear).
    pub values: HashMap<String, Option<Vec<Sub<'a>>>>,
    /// The open classes of other keys: (encoded keys, the subschemas their values obey).
    pub classes: Vec<(Lang, Vec<Sub<'a>>)>,
}

/// What is needed of an object's entries to write it.
struct Entries {
    /// Per named key: `"key": value` (None: it cannot appear).
    named: Vec<Option<Expr>>,
    /// The members of every class of other keys (None: none can appear).
    extra: Option<Expr>,
}

impl<'a> Translator<'a> {
    /// The objects of `shape` (None: none).
    pub(crate) fn emit_object(&mut self, shape: &Shape<'a>) -> Result<Option<Expr>> {
        if let Some(style) = self.xml_container() {
            let sep = self.xml_separators(style, false);
            if self.pass.place == super::xml::Place::XmlObject {
                return self.object_body(shape, shape.min_props, &sep);
            }
            // Nested, an empty object is nothing at all, not whitespace (as in XGrammar).
            let empty = shape.min_props == 0 && shape.required.is_empty() && shape.bad_members.is_empty();
            let full = self.object_body(shape, shape.min_props.max(1), &sep)?;
            return Ok(alt(vec![full, empty.then_some(Expr::Empty)]));
        }
        let sep = self.separators(['{', '}'], self.pass.json_depth);
        if self.opts.indent.is_none() {
            return self.object_body(shape, shape.min_props, &sep);
        }
        // As for arrays: {} apart, the others with at least one member.
        let empty = shape.min_props == 0 && shape.required.is_empty() && shape.bad_members.is_empty();
        let full = self.object_body(shape, shape.min_props.max(1), &sep)?;
        Ok(alt(vec![full, empty.then(|| lit("{}"))]))
    }

    /// The object clauses of `shape` as the grammar enforces them: unless `spec_exact`,
    /// an object whose schema names keys (`properties`, `required`) and says nothing about
    /// others (no `additionalProperties`, `patternProperties` or `unevaluatedProperties`
    /// in any clause) gets one more clause closing it to the named keys, which a model
    /// would otherwise keep inventing. An object that names no key stays open: closing it
    /// would leave only `{}`.
    pub(crate) fn obj_clauses(&self, shape: &Shape<'a>) -> Vec<ObjClause<'a>> {
        let clauses = &shape.obj_clauses;
        if self.opts.spec_exact || clauses.iter().any(|c| !c.patterns.is_empty() || c.additional.is_some()) {
            return clauses.clone();
        }
        let named = named_keys(shape);
        if named.is_empty() {
            return clauses.clone();
        }
        let anything = self.constant_schema(&TRUE);
        let closing = ObjClause::new(
            named.into_iter().map(|k| (k, anything.clone())).collect(),
            Vec::new(),
            Some(self.constant_schema(&FALSE)),
        );
        clauses.iter().cloned().chain([closing]).collect()
    }

    /// The schema `true` or `false` of the translation's root resource.
    fn constant_schema(&self, node: &'static Value) -> Sub<'a> {
        SubNode::schema(Subschema { node, pointer: String::new(), base: ROOT_URI.into(), draft: self.root.draft })
    }

    /// The named keys of `shape` with the subschemas of their values, and the classes of
    /// other keys. A class of finitely many keys (a `propertyNames` enum, a pattern such
    /// as `^(a|b)$`) becomes named keys, so that each may appear at most once; in the
    /// open classes left, the matcher keeps keys distinct (see
    /// [`crate::grammar::distinct_keys`]), so counts of entries are counts of properties.
    pub(crate) fn object_layout(&mut self, shape: &Shape<'a>) -> Result<ObjectLayout<'a>> {
        let clauses = self.obj_clauses(shape);
        let mut names = named_keys(shape);
        let mut values = HashMap::with_capacity(names.len());
        for k in &names {
            let subs = self.named_value(shape, &clauses, k)?;
            values.insert(k.clone(), subs);
        }
        let classes = self.key_classes(shape, &clauses, &names)?;
        let mut open = Vec::new();
        let xml = self.xml_container().is_some();
        for class in classes {
            let dfa = self.langs.dfa(&class.keys, &self.limits)?;
            let Some(keys) = lang::finite_strings(&dfa, MAX_ENUMERATED_KEYS)? else {
                // Only named keys are written as parameters (see `xml`); said where the
                // schema asks for others (an object naming no key, a tool without
                // parameters, is no news).
                let asked = clauses.iter().any(|c| !c.patterns.is_empty() || c.additional.as_ref().is_some_and(|a| !is_false(a)));
                if xml && !asked {
                    continue;
                }
                if xml {
                    let at = super::shape_pointer(shape);
                    let note = format!(
                        "the object at {} is written as parameters of its named keys only: other keys are not written",
                        if at.is_empty() { "/" } else { &at }
                    );
                    if !self.warnings.contains(&note) {
                        self.warnings.push(note);
                    }
                    continue;
                }
                // A class shaped by patterns may leave a half-written key finitely many
                // endings (`^(abc|x+)$` after `ab`): the matcher then checks half-written
                // keys against the written ones too. Deciding it exactly costs an
                // automaton product per class: not worth its time.
                self.finite_key_endings |= !class.plain;
                self.open_keys = true;
                open.push((class.keys, class.subs));
                continue;
            };
            for bytes in keys {
                let k = decode_key(&bytes)?;
                if let Entry::Vacant(slot) = values.entry(k) {
                    names.push(slot.key().clone());
                    slot.insert(Some(class.subs.clone()));
                }
            }
        }
        Ok(ObjectLayout { names, values, classes: open })
    }

    /// The subschemas named key `k`'s value obeys (None: it may not appear): in every
    /// clause, its property's schema and every pattern it matches; only a key with
    /// neither falls to the clause's `additionalProperties`.
    fn named_value(&mut self, shape: &Shape<'a>, clauses: &[ObjClause<'a>], k: &str) -> Result<Option<Vec<Sub<'a>>>> {
        let mut subs = Vec::new();
        for clause in clauses {
            let mut matched = Vec::new();
            for (src, p_sub) in &clause.patterns {
                if self.pattern_matches(src, p_sub.pointer(), k)? {
                    matched.push(p_sub.clone());
                }
            }
            let own = clause.prop(k);
            let falls = own.is_none() && matched.is_empty();
            subs.extend(own.cloned());
            subs.extend(matched);
            if let (true, Some(a)) = (falls, &clause.additional) {
                subs.push(a.clone());
            }
        }
        let forbidden = shape.forbidden.iter().any(|f| f == k);
        if forbidden || (!shape.prop_names.is_empty() && !self.valid(&Value::String(k.to_string()), &shape.prop_names)?) {
            return Ok(None);
        }
        Ok(Some(subs))
    }

    /// The encoded-key language of a `propertyNames` schema (None: no key). `checked`:
    /// the keys go through the pattern check beside the parser where `format: "regex"`
    /// asks for it (see [`Translator::class_key`]), so the format is left to it; else it is
    /// refused (the keys that break a `propertyNames` are not what the check decides).
    pub(crate) fn key_body(&mut self, subs: &[Sub<'a>], checked: bool) -> Result<Option<Lang>> {
        let mut parts = Vec::new();
        for shape in self.shapes(subs)? {
            if !shape.kinds.has(Kinds::STR) {
                continue;
            }
            if let Some(members) = &shape.enumeration {
                for v in members {
                    if let Value::String(s) = v {
                        if self.check(v, &shape, false)? {
                            parts.push(Lang::literal(&encoded(s)));
                        }
                    }
                }
            } else if let Some(body) = self.string_body(&shape)? {
                if let Some((_, pointer)) = shape.formats.iter().find(|(name, _)| name == REGEX_FORMAT) {
                    if !checked {
                        let schema = pointer.strip_suffix("/format").unwrap_or(pointer);
                        self.unsupported(schema, "format", "the keys that are not regular expressions (format 'regex' in propertyNames inside not, oneOf or if) are not enforced")?;
                    }
                }
                parts.push(body);
            }
        }
        self.union(parts)
    }

    /// The union of `parts` (None: no part): one HIR when all are HIRs, else an automaton.
    pub(super) fn union(&mut self, mut parts: Vec<Lang>) -> Result<Option<Lang>> {
        if parts.len() <= 1 {
            return Ok(parts.pop());
        }
        if parts.iter().all(|p| matches!(p, Lang::Hir(_))) {
            let hirs = parts.iter().filter_map(|p| if let Lang::Hir(h) = p { Some(h.hir().clone()) } else { None }).collect();
            return Ok(Some(Lang::hir(Hir::alternation(hirs))));
        }
        let dfas = parts.iter().map(|p| self.langs.dfa(p, &self.limits)).collect::<Result<Vec<_>>>()?;
        let leaves = dfas.iter().map(|d| DfaExpr::Leaf(d)).collect();
        let union = Dfa::from_expr(&DfaExpr::Alt(leaves), &self.limits, "a propertyNames schema")?;
        let key = format!("alt!({})", parts.iter().map(Lang::key).collect::<Vec<_>>().join("|"));
        Ok(Some(Lang::Dfa(Arc::new(union.minimized()), key)))
    }

    /// The objects of `shape` with at least `lo` members.
    fn object_body(&mut self, shape: &Shape<'a>, lo: u64, sep: &Separators) -> Result<Option<Expr>> {
        self.object_with_bad_members(shape, Vec::new(), lo, sep)
    }

    /// The objects of `shape` laid out as `layout`; `musts`: members each of which one
    /// of the other keys' must be (see [`Translator::object_with_bad_members`]).
    fn object_of(
        &mut self,
        shape: &Shape<'a>,
        layout: &ObjectLayout<'a>,
        musts: Vec<Expr>,
        lo: u64,
        sep: &Separators,
    ) -> Result<Option<Expr>> {
        let Some(entries) = self.entries(shape, layout, &sep.colon)? else { return Ok(None) };
        let hi = shape.max_props;
        if hi.is_some_and(|h| h < lo) {
            return Ok(None);
        }
        let inner = if self.opts.any_order {
            self.object_any_order(shape, &layout.names, entries, musts, lo, &sep.comma)?
        } else {
            self.object_chain(shape, &layout.names, &entries, &musts, lo, &sep.comma)?
        };
        Ok(inner.map(|inner| seq(vec![sep.open.clone(), inner, sep.close.clone()])))
    }

    /// The objects of `shape` that have, for each of its [`Shape::bad_members`], a
    /// different key the member's filter speaks of whose value obeys its subschemas (a
    /// negated `additionalProperties`): for the first member, one alternative per named
    /// key it may be, present with a value that obeys them too, and one in which the open
    /// classes of other keys (less the names) must have such a member (gathered in
    /// `musts`); then the same for the rest.
    fn object_with_bad_members(
        &mut self,
        shape: &Shape<'a>,
        mut musts: Vec<Expr>,
        lo: u64,
        sep: &Separators,
    ) -> Result<Option<Expr>> {
        let layout = self.object_layout(shape)?;
        if shape.required.iter().any(|k| !matches!(layout.values.get(k), Some(Some(_)))) {
            return Ok(None);
        }
        let Some(member) = shape.bad_members.first().cloned() else {
            return self.object_of(shape, &layout, musts, lo, sep);
        };
        let mut rest = shape.clone();
        rest.bad_members.remove(0);
        let mut alts = Vec::new();
        for k in &layout.names {
            if !matches!(layout.values.get(k), Some(Some(_))) || !self.key_allowed(&member.filter, k)? {
                continue;
            }
            let mut one = rest.clone();
            one.require(std::slice::from_ref(k));
            // `additionalProperties: true` beside it: the clause must not close the object.
            // One clause per subschema: a clause names each key once.
            for bad in &member.bads {
                let anything = self.constant_schema(&TRUE);
                one.obj_clauses.push(ObjClause::new(vec![(k.clone(), bad.clone())], Vec::new(), Some(anything)));
            }
            alts.push(self.object_with_bad_members(&one, musts.clone(), lo, sep)?);
        }
        if let Some(must) = self.bad_class_members(shape, &layout, &member.filter, &member.bads, &sep.colon)? {
            musts.push(must);
            alts.push(self.object_with_bad_members(&rest, musts, lo, sep)?);
        }
        Ok(alt(alts))
    }

    /// `"key": value` for a key of an open class of `layout` outside `names`, with a
    /// value that obeys the class's subschemas and `bads` (None: no such member).
    fn bad_class_members(
        &mut self,
        shape: &Shape<'a>,
        layout: &ObjectLayout<'a>,
        filter: &KeyFilter<'a>,
        bads: &[Sub<'a>],
        colon: &Expr,
    ) -> Result<Option<Expr>> {
        let depth = self.pass.json_depth + 1;
        let regex = if layout.classes.is_empty() { None } else { self.key_regex(shape)? };
        let mut members = Vec::new();
        for (keys, subs) in &layout.classes {
            let Some(keys) = self.filtered_keys(filter, keys)? else { continue };
            let mut subs = subs.clone();
            subs.extend(bads.iter().cloned());
            if let Some(v) = self.value_rule(&subs, depth)? {
                let key = self.class_key(regex.as_deref(), &keys)?;
                members.push(Some(seq(vec![key, colon.clone(), rule(&v)])));
            }
        }
        Ok(alt(members))
    }

    /// The members of an object: `"key": value` per named key, and the members of the
    /// classes of other keys. None: a required key can have no value.
    fn entries(&mut self, shape: &Shape<'a>, layout: &ObjectLayout<'a>, colon: &Expr) -> Result<Option<Entries>> {
        let depth = self.pass.json_depth + 1;
        let mut named = Vec::with_capacity(layout.names.len());
        let xml = self.xml_container();
        for k in &layout.names {
            let member = match (&layout.values[k], xml) {
                (Some(subs), Some(style)) => self.xml_member(style, k, subs, depth, &super::shape_pointer(shape))?,
                (Some(subs), None) => {
                    let value = self.value_rule(subs, depth)?;
                    value.map(|v| seq(vec![lit(&dump(&Value::String(k.clone()))), colon.clone(), rule(&v)]))
                }
                (None, _) => None,
            };
            if member.is_none() && shape.required.contains(k) {
                return Ok(None);
            }
            named.push(member);
        }
        let regex = if layout.classes.is_empty() { None } else { self.key_regex(shape)? };
        let mut extra = Vec::new();
        for (keys, subs) in &layout.classes {
            if let Some(v) = self.value_rule(subs, depth)? {
                let key = self.class_key(regex.as_deref(), keys)?;
                extra.push(Some(seq(vec![key, colon.clone(), rule(&v)])));
            }
        }
        Ok(Some(Entries { named, extra: alt(extra) }))
    }

    /// The `format: "regex"` of `propertyNames` (its pointer) where every key the object
    /// may have beyond the named ones must be a regular expression; None where none must.
    /// Branches of `propertyNames` that disagree (one asks for a pattern, another allows
    /// any key) are refused: the check beside the parser reads every key or none.
    pub(super) fn key_regex(&mut self, shape: &Shape<'a>) -> Result<Option<String>> {
        if shape.prop_names.is_empty() {
            return Ok(None);
        }
        let (mut with, mut without) = (None, false);
        for names in self.shapes(&shape.prop_names)? {
            if !names.kinds.has(Kinds::STR) || names.enumeration.is_some() {
                continue;
            }
            match names.formats.iter().find(|(name, _)| name == REGEX_FORMAT) {
                Some((_, pointer)) => with = with.or(Some(pointer.clone())),
                None => without = true,
            }
        }
        let Some(pointer) = with else { return Ok(None) };
        if without {
            let schema = pointer.strip_suffix("/format").unwrap_or(&pointer).to_string();
            self.unsupported(
                &schema,
                "format",
                "a key that must be a regular expression where another branch of propertyNames allows a key that \
                 need not be one: the check beside the parser cannot tell the two apart",
            )?;
            return Ok(None);
        }
        Ok(Some(pointer))
    }

    /// `"key"` for the keys of a class (`keys`, encoded) of an object. Where `propertyNames`
    /// says keys are regular expressions (`regex`: its pointer, see [`Translator::key_regex`]), the key
    /// is read by the pattern check beside the parser as a string value is (see
    /// `Translator::regex_strings`): unless every key of the class is one, it is the one
    /// entry of a `perm!` marked [`Distinct::Regex`], where no key of the class can start a
    /// pattern that the class's automaton and the check cannot finish together; else refused.
    fn class_key(&mut self, regex: Option<&str>, keys: &Lang) -> Result<Expr> {
        let quoted = self.quoted(keys)?.into_expr();
        let Some(pointer) = regex else { return Ok(quoted) };
        let dfa = self.langs.dfa(keys, &self.limits)?;
        if crate::grammar::regex_text::all_patterns(&dfa, self.limits.max_regex_format_states)? == Some(true) {
            return Ok(quoted);
        }
        if let Some(why) = self.patterns_apart(&dfa, "the keys of a class (patternProperties, named keys) in propertyNames")? {
            self.unsupported(pointer.strip_suffix("/format").unwrap_or(pointer), "format", &why)?;
            return Ok(quoted);
        }
        Ok(regex_entry(quoted))
    }

    /// The quoted keys of a class, as one term.
    fn quoted(&mut self, keys: &Lang) -> Result<Lang> {
        let quote = || Hir::literal(*b"\"");
        if let Lang::Hir(h) = keys {
            return Ok(Lang::hir(Hir::concat(vec![quote(), h.hir().clone(), quote()])));
        }
        let what = "a class of object keys";
        let inner = self.langs.dfa(keys, &self.limits)?;
        let q = Dfa::literal(b"\"", &self.limits, what)?;
        // (In one pass where no key may go on with a bare quote, as every JSON key is;
        // else by subset construction.)
        let whole = match Dfa::concat_all(&[&q, &inner, &q], &self.limits, what)? {
            Some(d) => d,
            None => Dfa::from_expr(
                &DfaExpr::Seq(vec![DfaExpr::Leaf(&q), DfaExpr::Leaf(&inner), DfaExpr::Leaf(&q)]),
                &self.limits,
                what,
            )?,
        };
        Ok(Lang::Dfa(Arc::new(whole), format!("quoted!({})", keys.key())))
    }

    /// Properties in the schema's order: the chain of states (named key `i`, `c` members
    /// so far; `c` never passes `i` or the cap), built from the last key back, then the
    /// members of other keys. None: no object.
    fn object_chain(
        &mut self,
        shape: &Shape<'a>,
        names: &[String],
        entries: &Entries,
        musts: &[Expr],
        lo: u64,
        comma: &Expr,
    ) -> Result<Option<Expr>> {
        let hi = shape.max_props;
        if entries.extra.is_some() {
            self.grammar_count(shape, CountField::MinProps, "minProperties", lo)?;
            hi.map(|h| self.grammar_count(shape, CountField::MaxProps, "maxProperties", h)).transpose()?;
        }
        let cap = hi.unwrap_or(lo.max(1));
        let n = names.len() as u64;
        let states = (n + 1).saturating_mul(n.min(cap) + 1);
        // Ten times the cap of `contains`: these states are cheaper (no item rule each).
        let most = 10 * self.limits.max_spelled_count;
        if states > most as u64 {
            return Err(Self::limit_at(
                &shape_pointer(shape),
                "properties",
                &format!("{n} properties counted up to {cap} need {states} grammar states, more than 10 × the limit an object may have"),
                "max_spelled_count",
                self.limits.max_spelled_count,
            ));
        }
        let base = self.fresh_base("o");
        let required: HashSet<&str> = shape.required.iter().map(String::as_str).collect();
        let mut later: Vec<Option<Expr>> = match (musts, entries.extra.as_ref()) {
            ([], extra) => (0..=n.min(cap)).map(|c| object_tail(extra, lo, hi, c, comma)).collect(),
            (_, Some(extra)) => self.must_tails(&base, extra, musts, lo, hi, n.min(cap), comma),
            (_, None) => return Ok(None),
        };
        for i in (0..names.len()).rev() {
            crate::util::interrupt::check()?;
            let mut here = Vec::with_capacity(later.len());
            for c in 0..=(i as u64).min(cap) {
                let mut opts = Vec::new();
                if let Some(member) = entries.named[i].as_ref().filter(|_| hi.is_none_or(|h| c < h)) {
                    if let Some(next) = &later[(c + 1).min(cap) as usize] {
                        let lead = if c == 0 { Expr::Empty } else { comma.clone() };
                        opts.push(Some(seq(vec![lead, member.clone(), next.clone()])));
                    }
                }
                if !required.contains(names[i].as_str()) {
                    opts.push(later[c as usize].clone());
                }
                here.push(alt(opts).map(|body| self.state_body(&base, i, c, body)));
            }
            later = here;
        }
        Ok(later.swap_remove(0))
    }

    /// The members of other keys after chain states `c` = 0..=`last` (as [`object_tail`])
    /// when each of `musts` must be one of them, a different one each: state `c` needs
    /// `lo − c` more members and has room for `hi − c`. T_S(n, r), the members (at least
    /// `n`, at most `r`) among which the musts of set S each appear, is a must `j` of S
    /// then T_{S∖j}(n − 1, r − 1) (the plain rest once S∖j is empty), or an `extra`
    /// member then T_S(n − 1, r − 1): one rule per (S, (n, r)) on the path from (`lo`,
    /// `hi`), which also passes the pair of every later state, and a rule that refers to
    /// itself once neither bound counts.
    #[allow(clippy::too_many_arguments)]
    fn must_tails(
        &mut self,
        base: &str,
        extra: &Expr,
        musts: &[Expr],
        lo: u64,
        hi: Option<u64>,
        last: u64,
        comma: &Expr,
    ) -> Vec<Option<Expr>> {
        let more = |lo: u64, room: Option<u64>| {
            let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
            repeat(seq(vec![comma.clone(), extra.clone()]), count(lo), room.map(count))
        };
        // The path of (n, r) pairs, down to r = 0 or to the pair that repeats.
        let mut path = vec![(lo, hi)];
        while let Some(&(n, r)) = path.last() {
            if r == Some(0) || (r.is_none() && n == 0) {
                break;
            }
            path.push((n.saturating_sub(1), r.map(|r| r - 1)));
        }
        // Rules by (set of musts still to come, as bits; position on the path).
        let name = |set: usize, i: usize| format!("{base}_m{set}_{i}");
        // The rule of T_set at path position i + 1, as the rule at position i refers to it.
        let next = |set: usize, i: usize| match path.get(i + 1) {
            Some(&(_, Some(0))) => None,
            Some(_) => Some(rule(&name(set, i + 1))),
            None => Some(rule(&name(set, i))), // (0, unbounded): itself
        };
        let all = (1usize << musts.len()) - 1;
        for set in 1..=all {
            for (i, &(n, r)) in path.iter().enumerate().rev() {
                if r == Some(0) {
                    continue;
                }
                let mut alts = Vec::new();
                for (j, must) in musts.iter().enumerate().filter(|(j, _)| set & (1 << j) != 0) {
                    let left = set & !(1 << j);
                    if left == 0 {
                        alts.push(seq(vec![must.clone(), more(n.saturating_sub(1), r.map(|r| r - 1))]));
                    } else if let Some(t) = next(left, i) {
                        alts.push(seq(vec![must.clone(), comma.clone(), t]));
                    }
                }
                if let Some(t) = next(set, i) {
                    alts.push(seq(vec![extra.clone(), comma.clone(), t]));
                }
                let body = if alts.len() == 1 { alts.swap_remove(0) } else { Expr::Alt(alts) };
                self.add_rule(name(set, i), body);
            }
        }
        let tail = |i: usize| {
            path.get(i.min(path.len() - 1)).filter(|(_, r)| *r != Some(0)).map(|_| rule(&name(all, i.min(path.len() - 1))))
        };
        (0..=last)
            .map(|c| {
                let t = tail(c as usize)?;
                Some(if c == 0 { t } else { seq(vec![comma.clone(), t]) })
            })
            .collect()
    }

    /// `body` of chain state (`i`, `c`) as it is written where it is used: itself when
    /// small, else a rule.
    fn state_body(&mut self, base: &str, i: usize, c: u64, body: Expr) -> Expr {
        if nodes(&body) <= INLINE_NODES {
            return body;
        }
        let name = format!("{base}_{i}_{c}");
        self.add_rule(name.clone(), body);
        rule(&name)
    }

    /// Properties in any order: one `perm!` whose entries are the named properties
    /// (required ones exactly once, the others at most once) and the class of other keys
    /// (any number of times), with `minProperties`/`maxProperties` as its count. The
    /// parser carries the set of keys seen (see [`crate::grammar::perm`]), so the grammar
    /// grows linearly with the number of properties and stays exact.
    fn object_any_order(
        &mut self,
        shape: &Shape<'a>,
        names: &[String],
        entries: Entries,
        musts: Vec<Expr>,
        lo: u64,
        comma: &Expr,
    ) -> Result<Option<Expr>> {
        let hi = shape.max_props;
        let mut perm = Vec::new();
        // Members that must appear, each once (other members may be like them).
        let needed = shape.required.len() as u64 + musts.len() as u64;
        perm.extend(musts.into_iter().map(|expr| PermEntry { expr, required: true, repeat: false, distinct: Distinct::No }));
        for (k, member) in names.iter().zip(entries.named) {
            let required = shape.required.contains(k);
            match member {
                Some(expr) => perm.push(PermEntry { expr, required, repeat: false, distinct: Distinct::No }),
                None if required => return Ok(None),
                None => {}
            }
        }
        let has_extra = entries.extra.is_some();
        perm.extend(entries.extra.map(|expr| PermEntry { expr, required: false, repeat: true, distinct: Distinct::No }));
        // The list must be finishable (the engine would drop it too, but the translator
        // reports a schema that allows no value itself): enough keys for the least count,
        // room for the required ones.
        if hi.is_some_and(|h| needed > h) || (!has_extra && lo > perm.len() as u64) {
            return Ok(None);
        }
        if perm.is_empty() {
            return Ok(Some(Expr::Empty));
        }
        let (min, max) = if has_extra {
            let min = self.grammar_count(shape, CountField::MinProps, "minProperties", lo)?;
            (min, hi.map(|h| self.grammar_count(shape, CountField::MaxProps, "maxProperties", h)).transpose()?)
        } else {
            // At most one of each entry: the bounds past their number change nothing.
            let most = perm.len() as u64;
            (lo as u32, hi.map(|h| h.min(most) as u32))
        };
        Ok(Some(Expr::Perm { sep: Box::new(comma.clone()), entries: perm, min, max, pos: AT }))
    }
}

/// The members of other keys after chain state `c` of an object with `lo` to `hi`
/// members. None: it cannot end there.
fn object_tail(extra: Option<&Expr>, lo: u64, hi: Option<u64>, c: u64, comma: &Expr) -> Option<Expr> {
    let need = lo.saturating_sub(c);
    let room = hi.map(|h| h.saturating_sub(c));
    let Some(extra) = extra.filter(|_| room != Some(0)) else { return (need == 0).then_some(Expr::Empty) };
    if room.is_some_and(|r| r < need) {
        return None;
    }
    // With other keys, the counts were checked to fit (see `grammar_count`).
    let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    let (need, room) = (count(need), room.map(count));
    let more = || seq(vec![comma.clone(), extra.clone()]);
    let fewer = |n: u32| n.saturating_sub(1);
    Some(if c > 0 {
        repeat(more(), need, room)
    } else if need == 0 {
        let rest = if room == Some(1) { Expr::Empty } else { repeat(more(), 0, room.map(fewer)) };
        opt(seq(vec![extra.clone(), rest]))
    } else {
        seq(vec![extra.clone(), repeat(more(), need - 1, room.map(fewer))])
    })
}

/// The names of `shape`'s properties, then its required names, each once.
fn named_keys(shape: &Shape<'_>) -> Vec<String> {
    let mut seen = HashSet::new();
    let props = shape.obj_clauses.iter().flat_map(|c| c.props.iter().map(|(k, _)| k));
    props.chain(&shape.required).filter(|k| seen.insert(k.as_str())).cloned().collect()
}

/// The encoded keys no class holds: the named keys and the forbidden ones (None: no key).
pub(super) fn excluded_keys(shape: &Shape<'_>, names: &[String]) -> Option<Lang> {
    let mut forbidden: Vec<&String> = shape.forbidden.iter().filter(|k| !names.contains(k)).collect();
    forbidden.sort();
    let keys: Vec<Hir> = names.iter().chain(forbidden).map(|k| Hir::literal(encoded(k).into_bytes())).collect();
    (!keys.is_empty()).then(|| Lang::hir(Hir::alternation(keys)))
}

/// Any key, encoded (built and named once).
pub(super) fn any_key() -> Lang {
    static ANY: std::sync::OnceLock<Lang> = std::sync::OnceLock::new();
    ANY.get_or_init(|| {
        Lang::hir(Hir::repetition(Repetition { min: 0, max: None, greedy: true, sub: Box::new(json_any_char_hir()) }))
    })
    .clone()
}

/// Is `sub` the schema `false`?
pub(crate) fn is_false(sub: &Sub<'_>) -> bool {
    matches!(&**sub, SubNode::Schema { sub, negated: false } if sub.node == &Value::Bool(false))
}

/// A key from its JSON encoding (without the quotes).
pub(crate) fn decode_key(bytes: &[u8]) -> Result<String> {
    let quoted = [b"\"".as_slice(), bytes, b"\""].concat();
    serde_json::from_slice(&quoted)
        .map_err(|e| Error::Internal(format!("a key class holds a key that is not JSON-encoded ({e})")))
}

/// The number of nodes of `e` (the size that decides whether a body is inlined).
fn nodes(e: &Expr) -> usize {
    1 + e.children().map(nodes).sum::<usize>()
}
