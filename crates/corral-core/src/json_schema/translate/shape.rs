//! What the translator knows of one JSON value while it reads a schema: a [`Shape`] is a
//! conjunction of constraints per JSON type, and a [`Sub`] is one thing to conjoin into
//! it: a subschema in context (possibly negated), or a [`Synthetic`] constraint that
//! negation makes (`not: {minimum: 3}` becomes "a number below 3").

use crate::util::hash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::rc::Rc;

use serde_json::{Map, Value};

use super::super::numbers::Decimal;
use super::super::resources::{escape_pointer, Draft, Subschema};

/// A set of JSON value kinds; integers and other numbers apart (`"type": "integer"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Kinds(u8);

impl Kinds {
    pub const NULL: Kinds = Kinds(1);
    pub const BOOL: Kinds = Kinds(2);
    /// Numbers with an integral value.
    pub const INT: Kinds = Kinds(4);
    /// Numbers with a fraction.
    pub const FRAC: Kinds = Kinds(8);
    pub const STR: Kinds = Kinds(16);
    pub const ARR: Kinds = Kinds(32);
    pub const OBJ: Kinds = Kinds(64);
    pub const NUMBER: Kinds = Kinds(4 | 8);
    pub const ALL: Kinds = Kinds(127);
    pub const NONE: Kinds = Kinds(0);

    /// The kinds of a `type` name (None for an unknown name).
    pub fn of_type_name(name: &str) -> Option<Kinds> {
        Some(match name {
            "null" => Kinds::NULL,
            "boolean" => Kinds::BOOL,
            "integer" => Kinds::INT,
            "number" => Kinds::NUMBER,
            "string" => Kinds::STR,
            "array" => Kinds::ARR,
            "object" => Kinds::OBJ,
            _ => return None,
        })
    }

    pub fn has(self, k: Kinds) -> bool {
        self.0 & k.0 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub const fn and(self, k: Kinds) -> Kinds {
        Kinds(self.0 & k.0)
    }

    pub const fn or(self, k: Kinds) -> Kinds {
        Kinds(self.0 | k.0)
    }

    pub const fn without(self, k: Kinds) -> Kinds {
        Kinds(self.0 & !k.0)
    }
}

/// A subschema or synthetic constraint, shared (shapes are copied at every alternative).
pub(crate) type Sub<'a> = Rc<SubNode<'a>>;

/// See [`Sub`].
#[derive(Debug)]
pub(crate) enum SubNode<'a> {
    /// A subschema; `negated`: its negation.
    Schema { sub: Subschema<'a>, negated: bool },
    /// A constraint made by negation.
    Synthetic(Synthetic<'a>),
}

/// What identifies a [`Sub`] for memoization: a subschema by its node, base URI, draft
/// and sign; a synthetic constraint by its identity (they are kept alive by the
/// translator for as long as keys are compared).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SubKey {
    Schema { node: usize, base: Rc<str>, draft: Draft, negated: bool },
    Synthetic(usize),
}

impl std::hash::Hash for SubKey {
    /// Everything but the base URI's text: a node is read under one base but for a
    /// resource reached through several ids, and keys are hashed in bulk (a shape's set
    /// of subschemas read, cloned and grown per alternative; memo keys of long lists).
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match self {
            SubKey::Schema { node, base: _, draft, negated } => (0u8, node, draft, negated).hash(h),
            SubKey::Synthetic(id) => (1u8, id).hash(h),
        }
    }
}

impl<'a> SubNode<'a> {
    /// A subschema, not negated.
    pub fn schema(sub: Subschema<'a>) -> Sub<'a> {
        Rc::new(SubNode::Schema { sub, negated: false })
    }

    /// The memoization key (see [`SubKey`]).
    pub fn key(self: &Rc<Self>) -> SubKey {
        match &**self {
            SubNode::Schema { sub, negated } => SubKey::Schema {
                node: sub.node as *const Value as usize,
                base: sub.base.clone(),
                draft: sub.draft,
                negated: *negated,
            },
            SubNode::Synthetic(_) => SubKey::Synthetic(Rc::as_ptr(self) as *const u8 as usize),
        }
    }

    /// The subschema with the opposite sign (a synthetic constraint is never negated).
    pub fn negate(&self) -> Sub<'a> {
        match self {
            SubNode::Schema { sub, negated } => Rc::new(SubNode::Schema { sub: sub.clone(), negated: !negated }),
            SubNode::Synthetic(_) => unreachable!("synthetic constraints are made positive and never negated"),
        }
    }

    /// The subschema (None for a synthetic constraint).
    pub fn subschema(&self) -> Option<&Subschema<'a>> {
        match self {
            SubNode::Schema { sub, .. } => Some(sub),
            SubNode::Synthetic(_) => None,
        }
    }

    /// The JSON pointer of a subschema ("" for a synthetic constraint).
    pub fn pointer(&self) -> &str {
        self.subschema().map_or("", |s| s.pointer.as_str())
    }
}

/// A constraint made by negating a keyword (see [`Shape::apply`]).
#[derive(Debug)]
pub(crate) enum Synthetic<'a> {
    /// The value is of one of these kinds.
    Kinds(Kinds),
    /// The object has no property of this name.
    Absent(String),
    /// The object has properties of all these names.
    Present(Vec<String>),
    /// The value is none of these (JSON equality; the canonical keys beside).
    NotValues(Vec<&'a Value>, Vec<String>),
    /// The value is of one of `kinds`, and obeys `field`.
    Field(Kinds, Field<'a>),
    /// An object whose property `name` (if present) fails `sub` (a negated subschema).
    BadProperty(String, Sub<'a>),
    /// An array whose item `index` exists and obeys `sub` (a negated subschema); earlier
    /// items obey `anything`.
    BadPrefixItem(usize, Sub<'a>, Sub<'a>),
    /// An array whose every item obeys `sub` (a negated `contains`).
    EveryItem(Sub<'a>),
    /// An array with an item at position `n` or later that obeys `sub` (a negated
    /// `items` after a tuple prefix of `n`, or `additionalItems`).
    ItemAfter(usize, Sub<'a>),
    /// An array with two equal items (a negated `uniqueItems`; its subschema's pointer).
    Duplicate(String),
    /// An object with a key that `filter` speaks of whose value obeys `bad` (a negated
    /// `additionalProperties`, `patternProperties` or `propertyNames`; the pointer of the
    /// keyword).
    OtherKey(KeyFilter<'a>, Sub<'a>, String),
}

/// The keys a negated object keyword requires one of (see
/// [`Synthetic::OtherKey`]): outside `names`, matching every pattern of `inside`,
/// matching none of `outside`, and refused by every `propertyNames` schema of
/// `breaks_names`. Patterns are ECMAScript sources with their pointers.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyFilter<'a> {
    pub names: Vec<String>,
    pub inside: Vec<(String, String)>,
    pub outside: Vec<(String, String)>,
    pub breaks_names: Vec<Sub<'a>>,
}

impl<'a> KeyFilter<'a> {
    /// Is every key one of these (no name, pattern or `propertyNames` narrows them)?
    pub fn any_key(&self) -> bool {
        self.names.is_empty() && self.inside.is_empty() && self.outside.is_empty() && self.breaks_names.is_empty()
    }

    /// The keys both filters speak of.
    pub fn and(&self, other: &KeyFilter<'a>) -> KeyFilter<'a> {
        let joined = |a: &[(String, String)], b: &[(String, String)]| a.iter().chain(b).cloned().collect();
        KeyFilter {
            names: self.names.iter().chain(&other.names).cloned().collect(),
            inside: joined(&self.inside, &other.inside),
            outside: joined(&self.outside, &other.outside),
            breaks_names: self.breaks_names.iter().chain(&other.breaks_names).cloned().collect(),
        }
    }
}

/// A member an object open to other keys must have (a negated `additionalProperties`,
/// `patternProperties` or `propertyNames`; see [`Shape::bad_members`]): a key `filter`
/// speaks of, with a value obeying every subschema of `bads`.
#[derive(Debug, Clone)]
pub(crate) struct BadMember<'a> {
    pub filter: KeyFilter<'a>,
    pub bads: Vec<Sub<'a>>,
}

/// One bound or list entry a [`Synthetic::Field`] adds.
#[derive(Debug)]
pub(crate) enum Field<'a> {
    Lo(Decimal, bool),
    Hi(Decimal, bool),
    MinLen(u64),
    MaxLen(u64),
    MinItems(u64),
    MaxItems(u64),
    MinProps(u64),
    MaxProps(u64),
    /// Not a multiple of this step (and the pointer of its `multipleOf`).
    NegMultiple(Decimal, String),
    /// Not matching this ECMAScript pattern (and the pointer of its `pattern`).
    NegPattern(String, String),
    /// Not of this format (and the pointer of its `format`).
    NegFormat(String, String),
    /// At least `min` items obey this sub.
    Contains(Sub<'a>, u64),
}

/// One object clause: the `properties`, `patternProperties` and `additionalProperties`
/// of one subschema, read together (a key obeys its property's schema and every pattern
/// it matches; only keys with neither fall to `additional`).
#[derive(Debug, Clone)]
pub(crate) struct ObjClause<'a> {
    /// Named properties, in document order.
    pub props: Vec<(String, Sub<'a>)>,
    /// Where each named property is in `props`.
    pub index: HashMap<String, usize>,
    /// (ECMAScript pattern, its subschema).
    pub patterns: Vec<(String, Sub<'a>)>,
    pub additional: Option<Sub<'a>>,
}

impl<'a> ObjClause<'a> {
    /// A clause of `props`, `patterns` and `additional`.
    pub fn new(props: Vec<(String, Sub<'a>)>, patterns: Vec<(String, Sub<'a>)>, additional: Option<Sub<'a>>) -> ObjClause<'a> {
        let index = props.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)).collect();
        ObjClause { props, index, patterns, additional }
    }

    /// The subschema of named property `name`.
    pub fn prop(&self, name: &str) -> Option<&Sub<'a>> {
        self.index.get(name).map(|&i| &self.props[i].1)
    }
}

/// The count bounds a keyword sets, for messages (see [`Shape::count_ptrs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum CountField {
    MinLen,
    MaxLen,
    MinItems,
    MaxItems,
    MinProps,
    MaxProps,
}

/// A conjunction of constraints on one JSON value.
#[derive(Debug, Clone)]
pub(crate) struct Shape<'a> {
    pub kinds: Kinds,
    /// No value satisfies it.
    pub unsat: bool,
    /// `enum`/`const`: the allowed values (first spelling of each), and their canonical keys.
    pub enumeration: Option<Vec<&'a Value>>,
    pub enum_keys: HashSet<String>,
    /// Values excluded by a negated `enum`/`const`, and their canonical keys.
    pub not_values: Vec<&'a Value>,
    pub not_keys: HashSet<String>,
    // numbers
    pub lo: Option<(Decimal, bool)>,
    pub hi: Option<(Decimal, bool)>,
    /// (`multipleOf` step, its pointer).
    pub mults: Vec<(Decimal, String)>,
    pub neg_mults: Vec<(Decimal, String)>,
    // strings
    pub min_len: u64,
    pub max_len: Option<u64>,
    /// (ECMAScript pattern, its pointer).
    pub patterns: Vec<(String, String)>,
    pub neg_patterns: Vec<(String, String)>,
    /// (format name, its pointer).
    pub formats: Vec<(String, String)>,
    pub neg_formats: Vec<(String, String)>,
    // arrays: clauses of (prefix items, the rest or None)
    pub arr_clauses: Vec<(Vec<Sub<'a>>, Option<Sub<'a>>)>,
    pub min_items: u64,
    pub max_items: Option<u64>,
    /// (`contains` subschema, least count, most count, the first position counted: an
    /// item before it counts for nothing, see [`Synthetic::ItemAfter`]).
    pub contains: Vec<(Sub<'a>, u64, Option<u64>, u64)>,
    /// `uniqueItems: true`: the pointer of the first subschema that says so.
    pub unique: Option<String>,
    /// A negated `uniqueItems` (the array must hold two equal items): the pointer of
    /// its subschema.
    pub duplicate: Option<String>,
    // objects
    pub obj_clauses: Vec<ObjClause<'a>>,
    pub required: Vec<String>,
    pub forbidden: Vec<String>,
    pub min_props: u64,
    pub max_props: Option<u64>,
    pub prop_names: Vec<Sub<'a>>,
    /// Keys that must exist outside some names, with values obeying a negated subschema
    /// (see [`Synthetic::OtherKey`]): resolved once the shape is whole, as alternatives.
    pub other_keys: Vec<(KeyFilter<'a>, Sub<'a>, String)>,
    /// Members that must be present, in an object open to keys it does not name (the
    /// [`Synthetic::OtherKey`]s left so once the shape is whole), each a different member
    /// (where one member may meet two of them, another alternative of the shape has them
    /// joined: see `Translator::other_key_alternatives`). Written by the object emitter,
    /// each as an alternative per named key and one where the open classes of keys must
    /// have such a member.
    pub bad_members: Vec<BadMember<'a>>,
    /// The pointer of the keyword that set each count bound (for messages).
    pub count_ptrs: HashMap<CountField, String>,
    /// A draft-4 subschema said "integer": `1.0` is not one (from draft 6 on it is).
    pub int_without_fraction: bool,
    /// The subschemas read into the shape (their disjunctions pending or distributed):
    /// every value of the shape obeys each, so a disjunction with one of them as an
    /// alternative adds nothing (see `Translator::expand`).
    pub absorbed: HashSet<SubKey>,
    /// What the subschemas read into the shape evaluate (their `properties` names,
    /// `patternProperties` patterns, or every key), each with the chain of subschemas it
    /// was read through in place (itself last): what an `unevaluatedProperties` above
    /// it sees, when nothing negated stands between them. The flag: the subschema has
    /// an `unevaluatedProperties` of its own, which evaluates every key for those above.
    pub evaluations: Vec<(Rc<[SubKey]>, Rc<Evaluated>, bool)>,
    /// `unevaluatedProperties` whose in-place applicators branch (`anyOf`, `oneOf`,
    /// `if`, `dependentSchemas`), with the key of their subschema: which properties are
    /// evaluated depends on the branches this shape took, so the clause is made when the
    /// shape is whole (`Translator::resolve_unevaluated`).
    pub pending_unevaluated: Vec<(Subschema<'a>, SubKey)>,
}

impl Default for Shape<'_> {
    fn default() -> Self {
        Shape {
            kinds: Kinds::ALL,
            unsat: false,
            enumeration: None,
            enum_keys: HashSet::new(),
            not_values: Vec::new(),
            not_keys: HashSet::new(),
            lo: None,
            hi: None,
            mults: Vec::new(),
            neg_mults: Vec::new(),
            min_len: 0,
            max_len: None,
            patterns: Vec::new(),
            neg_patterns: Vec::new(),
            formats: Vec::new(),
            neg_formats: Vec::new(),
            arr_clauses: Vec::new(),
            min_items: 0,
            max_items: None,
            contains: Vec::new(),
            unique: None,
            duplicate: None,
            obj_clauses: Vec::new(),
            required: Vec::new(),
            forbidden: Vec::new(),
            min_props: 0,
            max_props: None,
            prop_names: Vec::new(),
            other_keys: Vec::new(),
            bad_members: Vec::new(),
            count_ptrs: HashMap::new(),
            int_without_fraction: false,
            absorbed: HashSet::new(),
            evaluations: Vec::new(),
            pending_unevaluated: Vec::new(),
        }
    }
}

impl<'a> Shape<'a> {
    /// Keeps only the values of `kinds`.
    pub fn restrict(&mut self, kinds: Kinds) {
        self.kinds = self.kinds.and(kinds);
        if self.kinds.is_empty() {
            self.unsat = true;
        }
    }

    /// A lower bound on numbers (`exclusive`: strictly above).
    pub fn set_lo(&mut self, d: Decimal, exclusive: bool) {
        let tighter = match &self.lo {
            None => true,
            Some((cur, cur_excl)) => d > *cur || (d == *cur && exclusive && !cur_excl),
        };
        if tighter {
            self.lo = Some((d, exclusive));
        }
    }

    /// An upper bound on numbers (`exclusive`: strictly below).
    pub fn set_hi(&mut self, d: Decimal, exclusive: bool) {
        let tighter = match &self.hi {
            None => true,
            Some((cur, cur_excl)) => d < *cur || (d == *cur && exclusive && !cur_excl),
        };
        if tighter {
            self.hi = Some((d, exclusive));
        }
    }

    /// Property `name` must be absent.
    pub fn forbid(&mut self, name: &str) {
        if !self.forbidden.iter().any(|f| f == name) {
            self.forbidden.push(name.to_string());
        }
        if self.required.iter().any(|r| r == name) {
            self.unsat = true;
        }
    }

    /// Properties `names` must be present.
    pub fn require(&mut self, names: &[String]) {
        for n in names {
            if self.forbidden.contains(n) {
                self.unsat = true;
            }
            if !self.required.contains(n) {
                self.required.push(n.clone());
            }
        }
    }

    /// Adds a synthetic constraint.
    pub fn apply(&mut self, syn: &Synthetic<'a>) {
        match syn {
            Synthetic::Kinds(k) => self.restrict(*k),
            Synthetic::Absent(name) => self.forbid(name),
            Synthetic::Present(names) => self.require(names),
            Synthetic::NotValues(values, keys) => {
                self.not_values.extend(values.iter().copied());
                self.not_keys.extend(keys.iter().cloned());
            }
            Synthetic::Field(kinds, field) => {
                self.restrict(*kinds);
                self.apply_field(field);
            }
            Synthetic::BadProperty(name, bad) => {
                self.obj_clauses.push(ObjClause::new(vec![(name.clone(), bad.clone())], Vec::new(), None));
            }
            Synthetic::BadPrefixItem(i, bad, anything) => {
                let mut prefix = vec![anything.clone(); *i];
                prefix.push(bad.clone());
                self.arr_clauses.push((prefix, None));
                self.min_items = self.min_items.max(*i as u64 + 1);
            }
            Synthetic::EveryItem(good) => self.arr_clauses.push((Vec::new(), Some(good.clone()))),
            Synthetic::ItemAfter(n, bad) => {
                self.restrict(Kinds::ARR);
                self.contains.push((bad.clone(), 1, None, *n as u64));
                self.min_items = self.min_items.max(*n as u64 + 1);
            }
            Synthetic::Duplicate(pointer) => {
                self.restrict(Kinds::ARR);
                // Contradicts `uniqueItems` at once (an alternative of a `oneOf` between
                // arrays with and without it, as often, is dropped here).
                self.unsat |= self.unique.is_some();
                self.duplicate.get_or_insert_with(|| pointer.clone());
            }
            Synthetic::OtherKey(filter, bad, pointer) => {
                self.restrict(Kinds::OBJ);
                self.other_keys.push((filter.clone(), bad.clone(), pointer.clone()));
            }
        }
    }

    fn apply_field(&mut self, field: &Field<'a>) {
        let min = |cur: &mut u64, n: u64| *cur = (*cur).max(n);
        let max = |cur: &mut Option<u64>, n: u64| *cur = Some(cur.map_or(n, |c| c.min(n)));
        match field {
            Field::Lo(d, e) => self.set_lo(d.clone(), *e),
            Field::Hi(d, e) => self.set_hi(d.clone(), *e),
            Field::MinLen(n) => min(&mut self.min_len, *n),
            Field::MaxLen(n) => max(&mut self.max_len, *n),
            Field::MinItems(n) => min(&mut self.min_items, *n),
            Field::MaxItems(n) => max(&mut self.max_items, *n),
            Field::MinProps(n) => min(&mut self.min_props, *n),
            Field::MaxProps(n) => max(&mut self.max_props, *n),
            Field::NegMultiple(d, p) => self.neg_mults.push((d.clone(), p.clone())),
            Field::NegPattern(s, p) => self.neg_patterns.push((s.clone(), p.clone())),
            Field::NegFormat(s, p) => self.neg_formats.push((s.clone(), p.clone())),
            Field::Contains(sub, n) => self.contains.push((sub.clone(), *n, None, 0)),
        }
    }
}

/// What the in-place applicators beside an `unevaluatedProperties` always evaluate (see
/// `Translator::unevaluated_scope`).
#[derive(Debug, Default)]
pub(crate) struct Evaluated {
    /// `properties` names, in the order met.
    pub names: Vec<String>,
    /// `patternProperties` patterns, with their pointers.
    pub patterns: Vec<(String, String)>,
    /// Some `additionalProperties` or `unevaluatedProperties` evaluates every key.
    pub all: bool,
}

impl Evaluated {
    /// Adds what `other` evaluates.
    pub fn extend(&mut self, other: &Evaluated) {
        for k in &other.names {
            if !self.names.contains(k) {
                self.names.push(k.clone());
            }
        }
        for p in &other.patterns {
            if !self.patterns.iter().any(|(q, _)| *q == p.0) {
                self.patterns.push(p.clone());
            }
        }
        self.all |= other.all;
    }

    /// Adds what subschema `s` (`obj`) evaluates itself.
    pub fn gather(&mut self, s: &Subschema<'_>, obj: &Map<String, Value>) {
        for k in obj.get("properties").and_then(Value::as_object).into_iter().flat_map(|m| m.keys()) {
            if !self.names.contains(k) {
                self.names.push(k.clone());
            }
        }
        for src in obj.get("patternProperties").and_then(Value::as_object).into_iter().flat_map(|m| m.keys()) {
            let pointer = format!("{}/patternProperties/{}", s.pointer, escape_pointer(src));
            if !self.patterns.iter().any(|(p, _)| p == src) {
                self.patterns.push((src.clone(), pointer));
            }
        }
        self.all |= obj.contains_key("additionalProperties") || obj.contains_key("unevaluatedProperties");
    }
}
