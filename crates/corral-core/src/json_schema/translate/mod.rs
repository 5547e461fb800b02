//! JSON Schema → the engine's grammar form, built directly (no grammar text).
//!
//! The schema is read as a boolean formula over *shapes* (`shape`): a shape is a
//! conjunction of constraints per JSON type, and the combinators (`anyOf`, `oneOf`,
//! `not`, `if`/`then`/`else`, `dependentSchemas`…) become disjunctions of shapes,
//! distributed out (`allOf` is a plain conjunction; `not` is pushed down to the keywords,
//! `negation`). Each shape becomes one alternative of a value rule; subschemas
//! (property values, items) become rules of their own, memoized, so `$ref` recursion is
//! grammar recursion.
//!
//! Every constraint is enforced exactly or reported: an unsupported keyword is an
//! [`Error::Schema`] with its JSON pointer (or, with `strict` off, dropped with a warning).
//! Scalar sets that need intersection or complement (a pattern *and* a length, a range
//! *and* a multiple) are built as one automaton, so they stay exact too.
//!
//! The steps, one file each: `keywords` reads a subschema's keywords into a shape,
//! `negation` their negations, `expand` distributes disjunctions and proves `oneOf`
//! branches disjoint; `scalars`, `arrays` and `objects` write a shape's values;
//! `check` decides whether a given value (an `enum` member, a property name) satisfies
//! a shape; `assemble` runs the passes and builds the [`GrammarAst`].

use crate::util::hash::{HashMap, HashSet, HashSetExt};

use indexmap::IndexMap;
use serde_json::Value;

use super::resources::{self, Draft, Resources, Subschema};
use crate::error::{Error, Result};
use crate::frontend::ast::{Expr, GrammarAst, ItemStarts};
use crate::limits::Limits;

mod arrays;
mod assemble;
mod check;
mod expand;
mod expr;
mod key_classes;
mod key_filter;
mod keywords;
mod lang;
mod negation;
mod objects;
mod order;
mod scalars;
mod shape;
mod share;
mod value;
mod xml;

#[cfg(test)]
mod arrays_tests;
#[cfg(test)]
mod expand_tests;
#[cfg(test)]
mod negated_open_tests;
#[cfg(test)]
mod objects_tests;
#[cfg(test)]
mod scalars_tests;
#[cfg(test)]
mod share_tests;
#[cfg(test)]
pub(crate) mod tests;

use expr::{alt, lit, regex, rule, seq};
pub use order::order;
use xml::Place;
pub use xml::XmlStyle;

/// The format whose strings are regular expressions: not a regular language, enforced
/// beside the parser (see [`crate::grammar::regex_text`]).
pub(crate) const REGEX_FORMAT: &str = "regex";
use shape::{Kinds, Shape, Sub, SubKey, SubNode};

/// How whitespace may appear between JSON tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whitespace {
    /// None at all.
    Compact,
    /// Any run of up to `max` spaces, tabs and newlines between tokens.
    Flexible {
        /// The longest run.
        max: u32,
    },
}

/// The options of a translation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaOptions {
    /// Refuse (true) or drop with a warning (false) a keyword that cannot be enforced
    /// exactly.
    pub strict: bool,
    /// Whitespace between tokens (ignored when `indent` is set).
    pub whitespace: Whitespace,
    /// Properties in any order (true) or in the schema's order (false).
    pub any_order: bool,
    /// The specification's exact language: objects stay open to keys the schema does not
    /// name, and (see `integer_fraction`) integers may be written with a fraction.
    pub spec_exact: bool,
    /// `"type": "integer"` allows `1.0` (the specification, draft 6 on).
    pub integer_fraction: bool,
    /// Lay the output out as `json.dumps(indent=...)` does, one level indented by this
    /// text; None: no layout.
    pub indent: Option<String>,
    /// The draft of a schema that names none with `$schema`.
    pub draft: Draft,
    /// Is the value one part of a grammar with other text (a structural tag, `%json`)?
    /// Then, where the matcher must check distinct keys or items (see
    /// [`crate::grammar::distinct_keys`]), the value is marked as a JSON region
    /// ([`crate::frontend::ast::Distinct::Json`]), so that the check reads only it as JSON.
    pub json_region: bool,
    /// Write the top object's members, as a model's tool-call arguments, in this XML
    /// layout (see [`XmlStyle`]); None: JSON. Implies `json_region`.
    pub xml: Option<XmlStyle>,
    /// Texts no string value without `pattern` or `format`, and no key of a class of
    /// other keys, may hold, as written (JSON-escaped, or raw in an XML layout); an `enum`
    /// or `const` string holding one is dropped. Named keys are the schema's own.
    pub excludes: Vec<String>,
}

impl Default for SchemaOptions {
    fn default() -> Self {
        SchemaOptions {
            strict: true,
            whitespace: Whitespace::Compact,
            any_order: false,
            spec_exact: false,
            integer_fraction: false,
            indent: None,
            draft: Draft::Draft2020,
            json_region: false,
            xml: None,
            excludes: Vec::new(),
        }
    }
}

/// A translated schema: its grammar (start rule `start`), what was dropped (with
/// `strict` off), and whether some class of keys leaves a half-written key finitely many
/// endings (then the matcher must check half-written keys too, see
/// [`crate::grammar::distinct_keys`]).
#[derive(Debug)]
pub struct Translation {
    /// The grammar.
    pub ast: GrammarAst,
    /// Keywords dropped (strict off) and other findings.
    pub warnings: Vec<String>,
    /// See the type's docs.
    pub finite_key_endings: bool,
    /// Does some object take keys from a class of other keys (not named one by one)? Only
    /// then can the grammar alone repeat a key.
    pub open_keys: bool,
}

/// Translates `schema` (with `documents`: other schema documents by URI, for `$ref`s
/// that point outside it). A `$ref` into a document not given is an error naming it;
/// [`missing_documents`] lists them all up front.
pub fn translate(schema: &Value, documents: &[(String, Value)], options: &SchemaOptions, limits: &Limits) -> Result<Translation> {
    if options.xml.is_some() && options.indent.is_some() {
        return Err(Error::InvalidArgument("an XML layout of the arguments takes no indent".into()));
    }
    let mut t = Translator::new(schema, documents, options, limits)?;
    let ast = t.grammar()?;
    if t.open_keys && options.xml.is_some_and(XmlStyle::python_literals) {
        t.warnings.push(
            "an object open to other keys inside Python literals: a repeated key is not checked (the check reads JSON)".into(),
        );
    }
    Ok(Translation {
        ast,
        warnings: std::mem::take(&mut t.warnings),
        finite_key_endings: t.finite_key_endings,
        open_keys: t.open_keys,
    })
}

/// The documents `$ref`s in `schema` (and in `documents`) point into that are not among
/// `documents`: what a resolver is asked for before [`translate`] runs. The drafts'
/// metaschemas are listed too (a resolver may give its own), though [`translate`] reads
/// corral's copies of those where none is given (see [`super::metaschemas`]).
pub fn missing_documents(
    schema: &Value,
    documents: &[(String, Value)],
    options: &SchemaOptions,
    limits: &Limits,
) -> Result<Vec<String>> {
    let (res, _) = load(schema, documents, options, limits, false)?;
    Ok(res.missing_documents())
}

/// The resources of `schema` with the caller's `documents` (and, where `shipped`, the
/// metaschemas corral ships for references nothing else answers), and the root.
fn load<'a>(
    schema: &'a Value,
    documents: &'a [(String, Value)],
    options: &SchemaOptions,
    limits: &Limits,
    shipped: bool,
) -> Result<(Resources<'a>, Subschema<'a>)> {
    if !schema.is_object() && !schema.is_boolean() {
        return Err(resources::invalid(
            "",
            "",
            &format!("a schema must be a JSON object or a boolean, got {}", value::show(schema)),
        ));
    }
    let (mut res, root) = Resources::read(schema, options.draft, limits.max_schema_document_depth, !options.strict)?;
    for (uri, doc) in documents {
        res.add_document(uri, doc, root.draft, limits.max_schema_document_depth)?;
    }
    // Without the shipped metaschemas (`shipped`): the documents a resolver is asked for,
    // which may supply its own.
    if shipped {
        add_shipped_metaschemas(&mut res, root.draft, limits)?;
    }
    Ok((res, root))
}

/// Adds the metaschemas corral ships that a reference needs and the caller did not give
/// (a shipped one refers to others: 2020-12's to its vocabularies).
fn add_shipped_metaschemas(res: &mut Resources<'_>, draft: Draft, limits: &Limits) -> Result<()> {
    loop {
        let found: Vec<(String, &'static Value)> = res
            .missing_documents()
            .into_iter()
            .filter_map(|uri| super::metaschemas::document(&uri).map(|doc| (uri, doc)))
            .collect();
        if found.is_empty() {
            return Ok(());
        }
        for (uri, doc) in found {
            res.add_document(&uri, doc, draft, limits.max_schema_document_depth)?;
        }
    }
}

/// The memoization key of a value rule: its subs, (with an indent) its depth, and where
/// it is written (JSON or a place in an XML layout).
type RuleKey = (Vec<SubKey>, Option<usize>, Place);

/// One translation (see the module docs).
pub(crate) struct Translator<'a> {
    res: Resources<'a>,
    root: Subschema<'a>,
    opts: SchemaOptions,
    limits: Limits,
    /// Every synthetic constraint made, alive while keys with their address exist.
    keep_alive: Vec<Sub<'a>>,
    /// `oneOf`s whose branches are being proven disjoint (no re-entry).
    proving: HashSet<SubKey>,
    /// Subschemas with an `unevaluatedProperties` whose in-place applicators branch
    /// (see [`shape::Shape::pending_unevaluated`]): inside them, `anyOf` and a lone `if`
    /// are distributed so that each alternative knows which branches hold.
    branching_unevaluated: HashSet<SubKey>,
    /// Reading the values of a property for a disjointness proof: a `oneOf` is read as
    /// `anyOf` (a wider language, which a proof of disjointness may use), so that proofs
    /// do not nest proofs down every level of the schema.
    rough: bool,
    /// Lists of subschemas found to allow some value, or none (see `satisfiable`).
    satisfiable_memo: HashMap<Vec<SubKey>, bool>,
    /// Lists of subschemas read roughly into one shape, before their disjunctions are
    /// distributed: a list one longer is read from its prefix's (see `satisfiable`).
    /// Cleared past [`expand::ABSORBED_LISTS_KEPT`] lists.
    absorbed_lists: HashMap<Vec<SubKey>, expand::ExpandItem<'a>>,
    /// Each `enum` array's members and canonical keys, by the array's address.
    enums: HashMap<usize, (Vec<&'a Value>, Vec<String>)>,
    /// Value rules known to allow no value (found by an earlier pass).
    known_empty: HashSet<RuleKey>,
    /// Some class of keys leaves a half-written key finitely many endings.
    finite_key_endings: bool,
    /// See [`Translation::open_keys`].
    open_keys: bool,
    pass: Pass,
    warnings: Vec<String>,
    /// Automata and combinations built so far (see [`lang::LangCache`]).
    langs: lang::LangCache,
    /// Pattern languages, matchers and number products built so far.
    scalars: scalars::ScalarCache,
}

/// The value rules of a pass by name, in the order they were made (a body is None while
/// it is built, and for a rule that allows no value).
type Rules = IndexMap<String, Option<Expr>, foldhash::fast::RandomState>;

/// The state of one pass of the translation (see [`assemble`]).
#[derive(Default)]
struct Pass {
    /// The rules, in the order they were made (a value rule's body is None while it is
    /// built, and for a rule that allows no value).
    rules: Rules,
    memo: HashMap<RuleKey, Option<String>>,
    rule_keys: HashMap<String, RuleKey>,
    /// Value rules whose body is being built.
    building: HashSet<String>,
    /// Value rules referred to while being built (recursion).
    early: HashSet<String>,
    /// Value rules found empty after a recursive reference to them was made.
    found_empty: HashSet<RuleKey>,
    /// Subschemas being read in place inside one another.
    depth: usize,
    /// Value rules being built inside one another.
    value_depth: usize,
    /// The nesting depth, in the output, of the value being built.
    json_depth: usize,
    /// Where the value being built is written.
    place: Place,
    /// With an indent: a value past `max_indent_depth` was refused.
    depth_cut: bool,
    /// With an indent: containers laid out so far (see `value_rule`).
    layouts: usize,
    /// With an indent: value rules with no container, by their subs.
    depth_free: HashMap<Vec<SubKey>, String>,
    /// Rules made by `shared_rule` so far.
    shared: usize,
}

/// The separators of a non-empty container: open, close, comma, colon.
pub(crate) struct Separators {
    pub open: Expr,
    pub close: Expr,
    pub comma: Expr,
    pub colon: Expr,
}

impl<'a> Translator<'a> {
    fn new(
        schema: &'a Value,
        documents: &'a [(String, Value)],
        options: &SchemaOptions,
        limits: &Limits,
    ) -> Result<Translator<'a>> {
        let (res, root) = load(schema, documents, options, limits, true)?;
        let missing = res.missing_references();
        if let Some((uri, pointer)) = missing.first() {
            return Err(resources::invalid(
                pointer,
                "$ref",
                &format!("cannot resolve a reference into {uri} (no schema given for it; pass a resolver)"),
            ));
        }
        Ok(Translator {
            res,
            root,
            opts: options.clone(),
            limits: limits.clone(),
            keep_alive: Vec::new(),
            proving: HashSet::new(),
            branching_unevaluated: HashSet::new(),
            rough: false,
            satisfiable_memo: HashMap::default(),
            absorbed_lists: HashMap::default(),
            enums: HashMap::default(),
            known_empty: HashSet::new(),
            finite_key_endings: false,
            open_keys: false,
            pass: Pass::default(),
            warnings: Vec::new(),
            langs: lang::LangCache::default(),
            scalars: scalars::ScalarCache::default(),
        }
        .with_metaschema_warnings())
    }

    /// Warns of each metaschema corral does not know, read as the draft in force
    /// (`strict=False`; strict, they were refused).
    fn with_metaschema_warnings(mut self) -> Translator<'a> {
        for (at, message) in self.res.unknown_metaschemas().to_vec() {
            let why = message.split_once(": ").map_or(message.as_str(), |(_, why)| why).to_string();
            self.warnings.push(format!("read $schema at {at} as the draft in force: {why}"));
        }
        self
    }

    // --- errors -------------------------------------------------------------------

    /// A keyword that cannot be enforced exactly: an error in strict mode, else a
    /// warning (the keyword is dropped). `pointer` is the keyword's schema's.
    pub(crate) fn unsupported(&mut self, pointer: &str, keyword: &str, why: &str) -> Result<()> {
        let at = keyword_pointer(pointer, keyword);
        if self.opts.strict {
            return Err(resources::unsupported(&at, keyword, &format!("{why} (strict=False drops it with a warning)")));
        }
        let message = format!("dropped {keyword} at {}: {why}", if at.is_empty() { "/" } else { &at });
        if !self.warnings.contains(&message) {
            self.warnings.push(message);
        }
        Ok(())
    }

    /// An invalid keyword's error (`pointer`: its schema's).
    pub(crate) fn invalid(pointer: &str, keyword: &str, why: &str) -> Error {
        resources::invalid(&keyword_pointer(pointer, keyword), keyword, why)
    }

    /// A limit's error at a keyword (`pointer`: the keyword's own).
    pub(crate) fn limit_at(pointer: &str, keyword: &str, why: &str, limit: &'static str, value: usize) -> Error {
        let what = if keyword.is_empty() { "schema" } else { keyword };
        let at = if pointer.is_empty() { "/" } else { pointer };
        let context = format!("{what} at {at}: {why}");
        Error::SchemaLimit { limit, value, context, pointer: pointer.to_string(), keyword: keyword.to_string() }
    }

    /// A count the grammar would repeat more often than `max_grammar_productions` allows.
    pub(crate) fn check_count(&self, shape: &Shape<'a>, field: shape::CountField, keyword: &str, n: Option<u64>) -> Result<()> {
        let cap = self.limits.max_grammar_productions;
        match n {
            Some(n) if n > cap as u64 => {
                let pointer = shape.count_ptrs.get(&field).cloned().unwrap_or_else(|| shape_pointer(shape));
                Err(Self::limit_at(
                    &pointer,
                    keyword,
                    &format!("a count of {n} repetitions in the grammar"),
                    "max_grammar_productions",
                    cap,
                ))
            }
            _ => Ok(()),
        }
    }

    // --- rules ----------------------------------------------------------------------

    /// A fresh rule-name prefix (`o12_40`: the value rules and rules made so far).
    pub(crate) fn fresh_base(&self, prefix: &str) -> String {
        format!("{prefix}{}_{}", self.pass.memo.len(), self.pass.rules.len())
    }

    /// Adds rule `name` with `body`.
    pub(crate) fn add_rule(&mut self, name: String, body: Expr) {
        self.pass.rules.insert(name, Some(body));
    }

    /// A synthetic constraint, kept alive for the translation.
    pub(crate) fn synthetic(&mut self, syn: shape::Synthetic<'a>) -> Sub<'a> {
        let s = std::rc::Rc::new(SubNode::Synthetic(syn));
        self.keep_alive.push(s.clone());
        s
    }

    /// The target of a sub that is only a `$ref` (annotations beside it), so that every
    /// reference to one definition shares one value rule.
    fn canonical(&self, sub: &Sub<'a>) -> Result<Sub<'a>> {
        let mut sub = sub.clone();
        for _ in 0..32 {
            let SubNode::Schema { sub: s, negated: false } = &*sub else { break };
            let Some(obj) = s.node.as_object() else { break };
            let Some(reference) = obj.get("$ref") else { break };
            let entered = self.res.enter(s);
            if entered.draft >= Draft::Draft2019 && !obj.keys().all(|k| k == "$ref" || keywords::is_annotation(k)) {
                break;
            }
            sub = SubNode::schema(self.res.resolve(&entered, reference)?);
        }
        Ok(sub)
    }

    /// The rule name for a value satisfying all `subs` (None: nothing does), written
    /// `depth` containers deep in the output (only an indent makes that matter).
    pub(crate) fn value_rule(&mut self, subs: &[Sub<'a>], depth: usize) -> Result<Option<String>> {
        self.value_rule_in(subs, depth, Place::Json)
    }

    /// [`Translator::value_rule`] for a value written at `place`.
    pub(crate) fn value_rule_in(&mut self, subs: &[Sub<'a>], depth: usize, place: Place) -> Result<Option<String>> {
        // A conjunction is idempotent: a subschema met twice (the same `properties` entry
        // through the schema and again through each branch of a `oneOf` around it) counts
        // once, or values nested through it would make ever longer, ever new rules.
        let mut subs: Vec<Sub<'a>> = subs.iter().map(|s| self.canonical(s)).collect::<Result<_>>()?;
        let mut seen = HashSet::new();
        subs.retain(|s| seen.insert(s.key()));
        let keys: Vec<SubKey> = subs.iter().map(|s| s.key()).collect();
        let indent = self.opts.indent.is_some();
        if indent {
            if depth > self.limits.max_indent_depth {
                self.pass.depth_cut = true;
                return Ok(None);
            }
            if let Some(name) = self.pass.depth_free.get(&keys) {
                return Ok(Some(name.clone()));
            }
        }
        let key: RuleKey = (keys, indent.then_some(depth), place);
        if self.known_empty.contains(&key) {
            return Ok(None);
        }
        if let Some(name) = self.pass.memo.get(&key) {
            if let Some(n) = name {
                if self.pass.building.contains(n) {
                    self.pass.early.insert(n.clone());
                }
            }
            return Ok(name.clone());
        }
        let name = format!("v{}", self.pass.memo.len());
        self.pass.memo.insert(key.clone(), Some(name.clone()));
        self.pass.rule_keys.insert(name.clone(), key.clone());
        self.pass.rules.insert(name.clone(), None);
        self.pass.building.insert(name.clone());
        let layouts = self.pass.layouts;
        let outer = std::mem::replace(&mut self.pass.place, place);
        let body = self.value_body(&subs, depth);
        self.pass.place = outer;
        self.pass.building.remove(&name);
        let Some(body) = body? else {
            // Unsatisfiable: callers drop what needs it. A recursive reference made while
            // building it is redone (see `assemble`) with the rule known empty.
            self.pass.memo.insert(key.clone(), None);
            self.pass.rules.shift_remove(&name);
            if self.pass.early.contains(&name) {
                self.pass.found_empty.insert(key);
            }
            return Ok(None);
        };
        self.pass.rules.insert(name.clone(), Some(body));
        if indent && self.pass.layouts == layouts {
            self.pass.depth_free.insert(key.0, name.clone());
        }
        Ok(Some(name))
    }

    /// The alternatives of a value rule's body (see [`Translator::value_rule`]).
    fn value_body(&mut self, subs: &[Sub<'a>], depth: usize) -> Result<Option<Expr>> {
        self.pass.value_depth += 1;
        let outer = std::mem::replace(&mut self.pass.json_depth, depth);
        let body = (|| {
            if self.pass.value_depth > self.limits.max_schema_value_depth {
                let at = subs.iter().map(|s| s.pointer().to_string()).next().unwrap_or_default();
                return Err(Self::limit_at(
                    &at,
                    "",
                    "values nest too deep in the schema, through properties, items and references",
                    "max_schema_value_depth",
                    self.limits.max_schema_value_depth,
                ));
            }
            let shapes = self.shapes(subs)?;
            let mut alts = Vec::with_capacity(shapes.len());
            let mut shapes = shapes;
            self.check_distinct_items_alone(&mut shapes)?;
            self.check_regex_strings_alone(&mut shapes)?;
            self.check_regex_keys_alone(&mut shapes)?;
            for s in &shapes {
                alts.push(self.emit_shape(s)?);
            }
            Ok(alt(alts))
        })();
        self.pass.value_depth -= 1;
        self.pass.json_depth = outer;
        body
    }

    /// The items of a `uniqueItems` array of unboundedly many values are kept distinct by
    /// the matcher wherever the parser expects an item of such an array (see
    /// [`crate::grammar::distinct_keys`]). Where the value may also be another array, one
    /// whose items may repeat, the matcher tells the two apart by the kind of their first
    /// item (a string, an object, …): a distinct array whose first item may be of a kind
    /// that the other array's first item may be too is refused, at its `uniqueItems`.
    fn check_distinct_items_alone(&mut self, shapes: &mut [Shape<'a>]) -> Result<()> {
        if shapes.len() < 2 || !shapes.iter().any(|s| s.unique.is_some()) {
            return Ok(());
        }
        let may_repeat = |s: &Shape<'a>| match &s.enumeration {
            Some(members) => members.iter().any(|m| m.as_array().is_some_and(|a| a.len() > 1)),
            None => s.kinds.has(Kinds::ARR) && s.unique.is_none() && s.max_items.is_none_or(|m| m > 1),
        };
        let mut repeat_first = ItemStarts::NONE;
        for s in shapes.iter().filter(|s| may_repeat(s)) {
            repeat_first = repeat_first.or(self.first_item_starts(s)?);
        }
        if repeat_first.is_empty() {
            return Ok(());
        }
        for shape in shapes.iter_mut() {
            let Some(at) = shape.unique.clone().filter(|_| shape.kinds.has(Kinds::ARR) && shape.max_items.is_none_or(|m| m > 1))
            else {
                continue;
            };
            let apart = match self.unique_items(shape)? {
                arrays::UniqueItems::Strings { .. } => !repeat_first.meets(ItemStarts::STRING),
                arrays::UniqueItems::Any => !repeat_first.meets(self.first_item_starts(shape)?),
                _ => true,
            };
            if !apart {
                self.unsupported(
                    &at,
                    "uniqueItems",
                    "an array of distinct items of unboundedly many values where another branch (anyOf, oneOf, if) \
                     allows an array whose items may repeat, and whose first item may be of the same type: the check \
                     that keeps the items distinct tells the two apart by their first item's type",
                )?;
                // strict=False: the keyword is dropped, the grammar wider.
                shape.unique = None;
            }
        }
        Ok(())
    }

    /// Keys that must be regular expressions (`propertyNames` with `format: "regex"`) are
    /// checked by the matcher as pattern strings are (see [`Translator::check_regex_strings_alone`]):
    /// where another alternative of the same value allows an object whose keys need not be
    /// patterns, the check would hold its keys to it too, so the format is refused there
    /// (`strict=False` drops that `propertyNames`, the grammar wider).
    fn check_regex_keys_alone(&mut self, shapes: &mut [Shape<'a>]) -> Result<()> {
        if shapes.len() < 2 || shapes.iter().filter(|s| s.kinds.has(Kinds::OBJ)).count() < 2 {
            return Ok(());
        }
        let mut regex_keys = Vec::with_capacity(shapes.len());
        for shape in shapes.iter() {
            regex_keys.push(if shape.kinds.has(Kinds::OBJ) { Some(self.key_regex(shape)?) } else { None });
        }
        if !regex_keys.iter().any(|r| matches!(r, Some(None))) {
            return Ok(()); // every object alternative checks its keys
        }
        for (i, r) in regex_keys.into_iter().enumerate() {
            let Some(Some(pointer)) = r else { continue };
            let schema = pointer.strip_suffix("/format").unwrap_or(&pointer).to_string();
            self.unsupported(
                &schema,
                "format",
                "a key that must be a regular expression (propertyNames) where another branch (anyOf, oneOf, if) \
                 allows an object whose keys need not be: the check beside the parser cannot tell the two apart",
            )?;
            // strict=False: the keyword is dropped, the grammar wider.
            shapes[i].prop_names.clear();
        }
        Ok(())
    }

    /// A string that must be a regular expression (`format: "regex"`) is checked by the
    /// matcher from its opening quote wherever the parser expects one (see
    /// [`crate::grammar::regex_text`]). Where another alternative of the same value allows
    /// a string that need not be one, the check would hold that string to it too. Where
    /// that alternative allows every string, the format adds nothing and is dropped (exact);
    /// elsewhere it is refused at its pointer (`strict=False` drops it, the grammar wider).
    fn check_regex_strings_alone(&mut self, shapes: &mut [Shape<'a>]) -> Result<()> {
        let regex_format = |s: &Shape<'a>| {
            let checked = s.enumeration.is_none() && s.kinds.has(Kinds::STR);
            s.formats.iter().find(|(name, _)| name == REGEX_FORMAT && checked).map(|(_, p)| p.clone())
        };
        if shapes.len() < 2 || !shapes.iter().any(|s| regex_format(s).is_some()) {
            return Ok(());
        }
        let other_string = shapes.iter().any(|s| {
            regex_format(s).is_none()
                && match &s.enumeration {
                    Some(members) => members.iter().any(|v| v.is_string()),
                    None => s.kinds.has(Kinds::STR),
                }
        });
        if !other_string {
            return Ok(());
        }
        let any_string = shapes.iter().any(|s| {
            s.enumeration.is_none()
                && s.kinds.has(Kinds::STR)
                && s.min_len == 0
                && s.max_len.is_none()
                && s.patterns.is_empty()
                && s.neg_patterns.is_empty()
                && s.formats.is_empty()
                && s.neg_formats.is_empty()
                && !s.not_values.iter().any(|v| v.is_string())
        });
        for shape in shapes.iter_mut() {
            let Some(pointer) = regex_format(shape) else { continue };
            if any_string {
                // `anyOf: [{"format": "regex"}, {"type": "string"}]`: any string.
                shape.formats.retain(|(name, _)| name != REGEX_FORMAT);
                continue;
            }
            self.unsupported(
                pointer.strip_suffix("/format").unwrap_or(&pointer),
                "format",
                "a string that must be a regular expression where another branch (anyOf, oneOf, if) allows a string \
                 that need not be one: the check beside the parser cannot tell the two apart",
            )?;
            // strict=False: the keyword is dropped, the grammar wider.
            shape.formats.retain(|(name, _)| name != REGEX_FORMAT);
        }
        Ok(())
    }

    /// The values of one shape.
    fn emit_shape(&mut self, shape: &Shape<'a>) -> Result<Option<Expr>> {
        let here = self.kinds_here();
        if shape.kinds.and(here) != shape.kinds {
            // A place in an XML layout writes only some kinds (see `xml`).
            let mut only = shape.clone();
            only.kinds = shape.kinds.and(here);
            return self.emit_shape(&only);
        }
        if shape.enumeration.is_some() {
            return self.emit_enum(shape);
        }
        let mut parts: Vec<Option<Expr>> = Vec::new();
        let excluded = |v: &Value| shape.not_values.iter().any(|x| value::json_equal(x, v));
        if shape.kinds.has(Kinds::NULL) && !excluded(&Value::Null) {
            parts.push(Some(lit(&self.scalar_text(&Value::Null))));
        }
        if shape.kinds.has(Kinds::BOOL) {
            for b in [true, false] {
                if !excluded(&Value::Bool(b)) {
                    parts.push(Some(lit(&self.scalar_text(&Value::Bool(b)))));
                }
            }
        }
        if shape.kinds.has(Kinds::NUMBER) {
            parts.push(self.emit_number(shape)?);
        }
        if shape.kinds.has(Kinds::STR) {
            parts.push(match self.xml_here().filter(|style| style.raw_strings()) {
                Some(style) => self.emit_raw_string(shape, style)?,
                None => self.emit_string(shape)?,
            });
        }
        if self.opts.indent.is_some() && shape.kinds.has(Kinds::ARR.or(Kinds::OBJ)) {
            // The same scalars at every depth: one rule.
            let scalars = alt(std::mem::take(&mut parts));
            parts.push(scalars.map(|e| self.shared_rule(e)));
        }
        if shape.kinds.has(Kinds::ARR) {
            parts.push(self.emit_array(shape)?);
        }
        if shape.kinds.has(Kinds::OBJ) {
            parts.push(self.emit_object(shape)?);
        }
        Ok(alt(parts))
    }

    /// The text of a scalar value, or of a string: JSON, or in the pythonic style the
    /// Python literal (`None`, `True`, `False`; a JSON string is a Python string).
    pub(crate) fn scalar_text(&self, v: &Value) -> String {
        match (v, self.opts.xml.is_some_and(XmlStyle::python_literals)) {
            (Value::Null, true) => "None".into(),
            (Value::Bool(b), true) => (if *b { "True" } else { "False" }).into(),
            _ => value::dump(v),
        }
    }

    /// `body` as a rule of its own, which every place writing the same body will refer to
    /// (equal rules are written once, see `share`; with an indent, the value rules of each
    /// depth repeat their scalars).
    fn shared_rule(&mut self, body: Expr) -> Expr {
        if matches!(body, Expr::Term { .. } | Expr::Ref { .. }) {
            return body;
        }
        let name = format!("s{}", self.pass.shared);
        self.pass.shared += 1;
        self.add_rule(name.clone(), body);
        rule(&name)
    }

    /// The separators of a non-empty container written `depth` containers deep
    /// (`brackets`: `"{}"` or `"[]"`). With an indent, as `json.dumps(indent=...)` lays it
    /// out: a newline and the next level's indentation after the opening bracket and
    /// after each comma, a newline and this level's before the closing bracket, `": "`
    /// between key and value.
    pub(crate) fn separators(&mut self, brackets: [char; 2], depth: usize) -> Separators {
        let [o, c] = brackets;
        if let Some(indent) = &self.opts.indent {
            self.pass.layouts += 1;
            let inner = format!("\n{}", indent.repeat(depth + 1));
            return Separators {
                open: lit(&format!("{o}{inner}")),
                close: lit(&format!("\n{}{c}", indent.repeat(depth))),
                comma: lit(&format!(",{inner}")),
                colon: lit(": "),
            };
        }
        match self.opts.whitespace {
            Whitespace::Compact => {
                Separators { open: lit(&o.to_string()), close: lit(&c.to_string()), comma: lit(","), colon: lit(":") }
            }
            Whitespace::Flexible { .. } => Separators {
                open: seq(vec![lit(&o.to_string()), rule("ws")]),
                close: seq(vec![rule("ws"), lit(&c.to_string())]),
                comma: seq(vec![rule("ws"), lit(","), rule("ws")]),
                colon: seq(vec![rule("ws"), lit(":"), rule("ws")]),
            },
        }
    }

    /// The whitespace rule's body (flexible whitespace only).
    fn ws_body(&self) -> Option<Expr> {
        match self.opts.whitespace {
            Whitespace::Flexible { max } if self.opts.indent.is_none() => Some(regex(&format!("[ \\t\\n\\r]{{0,{max}}}"))),
            _ => None,
        }
    }
}

/// The pointer of `keyword` in the schema at `pointer` (unchanged when it already ends
/// with the keyword).
fn keyword_pointer(pointer: &str, keyword: &str) -> String {
    if keyword.is_empty() {
        return pointer.to_string();
    }
    let token = format!("/{}", resources::escape_pointer(keyword));
    if pointer.ends_with(&token) {
        pointer.to_string()
    } else {
        format!("{}{token}", pointer.trim_end_matches('/'))
    }
}

/// Where an object shape's schema is, for messages (the parent of a property).
fn shape_pointer(shape: &Shape<'_>) -> String {
    for clause in &shape.obj_clauses {
        if let Some((_, sub)) = clause.props.first() {
            let p = sub.pointer();
            return match p.rfind("/properties/") {
                Some(i) if i > 0 => p[..i].to_string(),
                _ => "/".to_string(),
            };
        }
    }
    "/".to_string()
}
