//! Schema documents and what identifies their parts: drafts, `$id`s, anchors, and the
//! resolution of `$ref`.
//!
//! [`Resources`] holds the root document and any other documents the caller supplies,
//! indexed once: every `$id` (or draft 4's `id`) becomes a base URI, every `$anchor`,
//! `$dynamicAnchor` and draft-7-style `"$id": "#name"` an anchor. A `$ref` is then
//! resolved against its subschema's base URI (RFC 3986, see [`super::uri`]) to a document
//! and a JSON pointer or anchor in it. Documents are never fetched: a `$ref` to one that
//! was not supplied is an error naming it, and [`Resources::missing_documents`] lists
//! every such document up front, so that a caller with a resolver can supply them all
//! before the translation starts.

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use crate::util::hash::HashMap;

use serde_json::Value;

use super::uri;
use crate::error::{Error, Result, SchemaErrorKind};

/// The base URI of a root document that has no `$id` of its own.
pub const ROOT_URI: &str = "https://corral.invalid/schema.json";

/// A JSON Schema draft: which keywords exist and what some of them mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Draft {
    /// Draft 4 (`id`, boolean `exclusiveMaximum`).
    Draft4,
    /// Draft 6.
    Draft6,
    /// Draft 7.
    Draft7,
    /// Draft 2019-09 (`$anchor`, `$recursiveRef`, `$defs`).
    Draft2019,
    /// Draft 2020-12 (`prefixItems`, `$dynamicRef`).
    Draft2020,
}

impl Draft {
    /// The draft whose metaschema `uri` names (`http` or `https`, a trailing `#`
    /// ignored), None for another metaschema: another scheme names another document.
    pub fn from_metaschema(uri: &str) -> Option<Draft> {
        let rest = uri.strip_prefix("https://").or_else(|| uri.strip_prefix("http://"))?;
        match rest.trim_end_matches('#') {
            "json-schema.org/draft-04/schema" => Some(Draft::Draft4),
            "json-schema.org/draft-06/schema" => Some(Draft::Draft6),
            "json-schema.org/draft-07/schema" => Some(Draft::Draft7),
            "json-schema.org/draft/2019-09/schema" => Some(Draft::Draft2019),
            "json-schema.org/draft/2020-12/schema" => Some(Draft::Draft2020),
            _ => None,
        }
    }

    /// The keyword that gives a subschema its URI.
    pub fn id_keyword(self) -> &'static str {
        if self == Draft::Draft4 {
            "id"
        } else {
            "$id"
        }
    }
}

/// The draft a schema node names with `$schema`: `Ok(None)` when it names none, an
/// error for a metaschema corral does not read (its vocabularies are unknown).
fn named_draft(node: &Value, pointer: &str) -> Result<Option<Draft>> {
    match node.get("$schema").and_then(Value::as_str) {
        None => Ok(None),
        Some(uri) => match Draft::from_metaschema(uri) {
            Some(d) => Ok(Some(d)),
            None => Err(unsupported(
                &format!("{pointer}/$schema"),
                "$schema",
                &format!("metaschema {uri:?} (its vocabularies are unknown; corral reads drafts 4, 6, 7, 2019-09 and 2020-12)"),
            )),
        },
    }
}

/// One subschema in context: the node, its JSON pointer (prefixed by `uri#` outside the
/// root document), the base URI its references resolve against, and its draft.
#[derive(Debug, Clone, PartialEq)]
pub struct Subschema<'a> {
    /// The schema: an object or a boolean.
    pub node: &'a Value,
    /// Where it is, for messages.
    pub pointer: String,
    /// The URI its relative references resolve against (no fragment), its own id
    /// applied (see [`Resources::enter`]). Shared: every child of a resource has its base.
    pub base: Rc<str>,
    /// Its draft.
    pub draft: Draft,
}

/// A JSON pointer token escaped (`~` → `~0`, `/` → `~1`).
pub fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// An invalid schema's error at `pointer` (the keyword's own pointer).
pub fn invalid(pointer: &str, keyword: &str, why: &str) -> Error {
    schema_error(SchemaErrorKind::Invalid, pointer, keyword, why)
}

/// An unsupported schema's error at `pointer` (the keyword's own pointer).
pub fn unsupported(pointer: &str, keyword: &str, why: &str) -> Error {
    schema_error(SchemaErrorKind::Unsupported, pointer, keyword, why)
}

fn schema_error(kind: SchemaErrorKind, pointer: &str, keyword: &str, why: &str) -> Error {
    let at = if pointer.is_empty() { "/" } else { pointer };
    let what = if keyword.is_empty() { "schema" } else { keyword };
    Error::Schema { kind, message: format!("{what} at {at}: {why}"), pointer: pointer.to_string(), keyword: keyword.to_string() }
}

/// The keywords whose values hold subschemas, and how: (keyword, shape) where the shape
/// is a map of subschemas, a list of them, or one subschema.
const MAPS: [&str; 5] = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const LISTS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];
const SINGLES: [&str; 11] = [
    "items",
    "additionalItems",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Every subschema directly inside `node`, with the pointer tokens that lead to it, in
/// document order of the keyword groups (maps, lists, single subschemas, `dependencies`).
pub fn children(node: &Value) -> Vec<(&Value, Vec<String>)> {
    let Some(obj) = node.as_object() else { return Vec::new() };
    // One pass over the members (a lookup per keyword would hash thirty keys per node),
    // then the keyword order above.
    let mut found: Vec<(usize, &String, &Value)> = obj.iter().filter_map(|(k, v)| keyword_rank(k).map(|r| (r, k, v))).collect();
    found.sort_by_key(|&(r, _, _)| r);
    let mut out = Vec::new();
    for (rank, kw, value) in found {
        match value {
            Value::Object(m) if rank < MAPS.len() => out.extend(m.iter().map(|(k, s)| (s, vec![kw.clone(), k.clone()]))),
            Value::Array(v) if (MAPS.len()..MAPS.len() + LISTS.len()).contains(&rank) || kw == "items" => {
                out.extend(v.iter().enumerate().map(|(i, s)| (s, vec![kw.clone(), i.to_string()])))
            }
            Value::Object(m) if kw == "dependencies" => {
                for (k, s) in m {
                    if matches!(s, Value::Object(_) | Value::Bool(_)) {
                        out.push((s, vec![kw.clone(), k.clone()]));
                    }
                }
            }
            s @ (Value::Object(_) | Value::Bool(_)) if rank >= MAPS.len() + LISTS.len() && kw != "dependencies" => {
                out.push((s, vec![kw.clone()]))
            }
            _ => {}
        }
    }
    out
}

/// The place of keyword `k` in the order of [`children`] (None: it holds no subschema).
fn keyword_rank(k: &str) -> Option<usize> {
    MAPS.iter().chain(&LISTS).chain(&SINGLES).chain(&["dependencies"]).position(|kw| *kw == k)
}

/// A `LimitExceeded` error when JSON values in `document` nest deeper than `max_depth`
/// (walked with a stack of its own: any depth is safe to look at).
pub fn check_document_depth(document: &Value, pointer: &str, max_depth: usize) -> Result<()> {
    let mut stack: Vec<(&Value, usize, Vec<String>)> = vec![(document, 0, Vec::new())];
    while let Some((node, depth, path)) = stack.pop() {
        if depth > max_depth {
            let at: String = path.iter().map(|t| format!("/{}", escape_pointer(t))).collect();
            let at = format!("{pointer}{at}");
            return Err(Error::SchemaLimit {
                limit: "max_schema_document_depth",
                value: max_depth,
                context: format!("schema at {}: JSON values nest {depth} deep", if at.is_empty() { "/" } else { &at }),
                pointer: at,
                keyword: String::new(),
            });
        }
        let nested = |v: &Value| matches!(v, Value::Object(_) | Value::Array(_));
        match node {
            Value::Object(m) => stack.extend(m.iter().filter(|(_, v)| nested(v)).map(|(k, v)| (v, depth + 1, extend(&path, k)))),
            Value::Array(a) => stack.extend(
                a.iter().enumerate().filter(|(_, v)| nested(v)).map(|(i, v)| (v, depth + 1, extend(&path, &i.to_string()))),
            ),
            _ => {}
        }
    }
    Ok(())
}

fn extend(path: &[String], token: &str) -> Vec<String> {
    let mut p = path.to_vec();
    p.push(token.to_string());
    p
}

/// `base` joined with `reference`, or an invalid-schema error at `pointer/keyword` for a
/// reference that is not a URI reference.
fn join(base: &str, reference: &str, pointer: &str, keyword: &str) -> Result<String> {
    uri::check(reference).map_err(|why| {
        let at = format!("{pointer}/{}", escape_pointer(keyword));
        invalid(&at, keyword, &format!("{reference:?} is not a valid URI reference ({why})"))
    })?;
    Ok(uri::resolve(base, reference))
}

/// The documents of one translation, indexed (see the module docs).
#[derive(Debug, Default)]
pub struct Resources<'a> {
    /// Document (and embedded resource) URI → its node, the pointer of that node, and
    /// its draft.
    docs: HashMap<String, (&'a Value, String, Draft)>,
    /// (resource URI, anchor name) → the subschema it names.
    anchors: HashMap<(String, String), Subschema<'a>>,
    /// The documents `$ref`s point into, by URI (to find those not supplied).
    /// (The pointer of the first `$ref` into each, for messages.)
    referenced: BTreeMap<String, String>,
    /// The root document.
    root: Option<&'a Value>,
    /// Each `$ref` resolved so far, by (base URI, reference): a large schema points to
    /// its definitions hundreds of times, and each resolution parses URIs and walks a
    /// pointer.
    resolved: std::cell::RefCell<HashMap<(Rc<str>, String), Subschema<'a>>>,
    /// Read a metaschema corral does not know as the draft in force (`strict=False`)
    /// instead of refusing it; the `$schema`s so read, with their messages.
    lenient: bool,
    unknown_metaschemas: Vec<(String, String)>,
    /// The subschemas that declare each `$dynamicAnchor` name, and those with
    /// `"$recursiveAnchor": true` (under the name ""), by address: where only one
    /// declares it, a dynamic reference to it points where a `$ref` would.
    dynamic_anchors: HashMap<String, BTreeSet<usize>>,
    /// The dynamic scope's index (see the `dynamic` module).
    scope: dynamic::ScopeIndex<'a>,
}

#[path = "resources_dynamic.rs"]
mod dynamic;

impl<'a> Resources<'a> {
    /// The resources of a root `schema`, read as `default_draft` unless its `$schema`
    /// names another. Returns them and the root subschema.
    pub fn new(schema: &'a Value, default_draft: Draft, max_document_depth: usize) -> Result<(Resources<'a>, Subschema<'a>)> {
        Self::read(schema, default_draft, max_document_depth, false)
    }

    /// [`Resources::new`], where a `$schema` naming a metaschema corral does not know
    /// (`lenient`) is read as the draft in force and listed ([`Resources::unknown_metaschemas`])
    /// instead of refused.
    pub fn read(
        schema: &'a Value,
        default_draft: Draft,
        max_document_depth: usize,
        lenient: bool,
    ) -> Result<(Resources<'a>, Subschema<'a>)> {
        check_document_depth(schema, "", max_document_depth)?;
        let mut r = Resources { root: Some(schema), lenient, ..Default::default() };
        let draft = r.draft_named(schema, "")?.unwrap_or(default_draft);
        r.docs.insert(ROOT_URI.to_string(), (schema, String::new(), draft));
        r.index(schema, ROOT_URI, "", draft)?;
        let root = r.enter(&Subschema { node: schema, pointer: String::new(), base: ROOT_URI.into(), draft });
        r.scope.root = root.base.to_string();
        Ok((r, root))
    }

    /// Adds the document found at `uri` (no fragment), read as `default_draft` unless it
    /// names another. Its pointers in messages start with `uri#`.
    pub fn add_document(&mut self, uri: &str, doc: &'a Value, default_draft: Draft, max_document_depth: usize) -> Result<()> {
        let pointer = format!("{uri}#");
        check_document_depth(doc, &pointer, max_document_depth)?;
        let draft = self.draft_named(doc, &pointer)?.unwrap_or(default_draft);
        self.docs.insert(uri.to_string(), (doc, pointer.clone(), draft));
        self.index(doc, uri, &pointer, draft)
    }

    /// [`named_draft`], or in lenient mode None for a metaschema corral does not know
    /// (noted in `unknown_metaschemas`).
    fn draft_named(&mut self, node: &Value, pointer: &str) -> Result<Option<Draft>> {
        match named_draft(node, pointer) {
            Err(Error::Schema { message, pointer: at, .. }) if self.lenient => {
                self.unknown_metaschemas.push((at, message));
                Ok(None)
            }
            other => other,
        }
    }

    /// The `$schema`s naming a metaschema corral does not know, read as the draft in
    /// force (only when read leniently): (pointer, message).
    pub fn unknown_metaschemas(&self) -> &[(String, String)] {
        &self.unknown_metaschemas
    }

    /// The documents some `$ref` points into that were not supplied, sorted. (A caller
    /// with a resolver supplies them and asks again: new documents may point further.)
    pub fn missing_documents(&self) -> Vec<String> {
        self.missing_references().into_iter().map(|(uri, _)| uri).collect()
    }

    /// [`Resources::missing_documents`], each with the pointer of the first `$ref` into it
    /// (`…/$ref`, in its document's pointer form).
    pub fn missing_references(&self) -> Vec<(String, String)> {
        self.referenced.iter().filter(|(u, _)| !self.docs.contains_key(*u)).map(|(u, p)| (u.clone(), p.clone())).collect()
    }

    /// Records the identifiers and anchors in `node` and below it, and the documents its
    /// references point into.
    fn index(&mut self, node: &'a Value, base: &str, pointer: &str, draft: Draft) -> Result<()> {
        let mut stack: Vec<(&'a Value, String, Draft, String)> = vec![(node, base.to_string(), draft, pointer.to_string())];
        while let Some((node, mut base, draft, here)) = stack.pop() {
            if !node.is_object() {
                continue;
            }
            crate::util::interrupt::check()?;
            let draft = self.node_draft(node, draft, &here, here != pointer)?;
            let outer = base.clone();
            self.identify(node, &mut base, draft, &here)?;
            self.scope.note(node, &outer, &base, draft, &here);
            if let Some(r) = node.get("$ref").and_then(Value::as_str) {
                if let Ok(target) = join(&base, r, &here, "$ref") {
                    let doc = uri::split_fragment(&target).0.to_string();
                    self.referenced.entry(doc).or_insert_with(|| format!("{here}/$ref"));
                }
            }
            // Reversed onto the stack, so that subschemas are visited in document order
            // (the first of two equal anchors is the one reported).
            for (child, tokens) in children(node).into_iter().rev() {
                let at: String = tokens.iter().map(|t| format!("/{}", escape_pointer(t))).collect();
                stack.push((child, base.clone(), draft, format!("{here}{at}")));
            }
        }
        Ok(())
    }

    /// The draft of `node` inside a resource of `draft`: the one its `$schema` names, if
    /// any. The specifications give `$schema` a meaning only at the root of a resource;
    /// a subschema that names the draft it is already read with changes nothing, and one
    /// that names another draft (a definition pasted from a document of that draft) is
    /// read with that draft's keywords, as a validator that honours it would.
    ///
    /// One case stays refused: such a subschema that holds a `$ref`. Validators disagree
    /// on the draft its target is read with (the target's own, as corral reads it, or the
    /// one in force where the reference is, as `jsonschema` does).
    fn node_draft(&mut self, node: &Value, draft: Draft, here: &str, nested: bool) -> Result<Draft> {
        let Some(named) = self.draft_named(node, here)? else { return Ok(draft) };
        let own_id =
            [draft, named].iter().any(|d| node.get(d.id_keyword()).and_then(Value::as_str).is_some_and(|i| !i.starts_with('#')));
        if nested && named != draft && !own_id && holds_ref(node) {
            return Err(unsupported(
                &format!("{here}/$schema"),
                "$schema",
                "changes the draft in a subschema without an $id that holds a $ref (validators read the \
                 reference's target with different drafts); give the subschema an $id",
            ));
        }
        Ok(named)
    }

    /// Applies `node`'s id to `base` and records its anchors.
    fn identify(&mut self, node: &'a Value, base: &mut String, draft: Draft, here: &str) -> Result<()> {
        let id_key = draft.id_keyword();
        // Before 2019-09, `$ref` makes every sibling keyword (the id too) ignored.
        let ref_overrides = node.get("$ref").is_some() && draft < Draft::Draft2019;
        if let Some(ident) = node.get(id_key).and_then(Value::as_str).filter(|_| !ref_overrides) {
            let target = join(base, ident, here, id_key)?;
            let (uri, frag) = uri::split_fragment(&target);
            let sub = |b: &str| Subschema { node, pointer: here.to_string(), base: b.into(), draft };
            if ident.starts_with('#') && draft < Draft::Draft2019 {
                let resource = uri::split_fragment(base).0.to_string();
                self.add_anchor((resource, frag.to_string()), sub(base), id_key)?;
            } else {
                *base = uri.to_string();
                let known = self.docs.entry(base.clone()).or_insert((node, here.to_string(), draft));
                if !std::ptr::eq(known.0, node) && base != ROOT_URI {
                    return Err(invalid(
                        &format!("{here}/{id_key}"),
                        id_key,
                        &format!("{base} identifies another subschema too (which one a $ref means is undefined)"),
                    ));
                }
                if !frag.is_empty() && draft < Draft::Draft2019 {
                    self.add_anchor((base.clone(), frag.to_string()), sub(base), id_key)?;
                }
            }
        }
        let declared = || Subschema { node, pointer: here.to_string(), base: base.as_str().into(), draft };
        if let Some(name) = node.get("$dynamicAnchor").and_then(Value::as_str) {
            self.dynamic_anchors.entry(name.to_string()).or_default().insert(node as *const Value as usize);
            self.scope.declare(name, declared());
        }
        if node.get("$recursiveAnchor") == Some(&Value::Bool(true)) {
            self.dynamic_anchors.entry(String::new()).or_default().insert(node as *const Value as usize);
            self.scope.declare("", declared());
        }
        for key in ["$anchor", "$dynamicAnchor"] {
            if let Some(name) = node.get(key).and_then(Value::as_str) {
                let sub = Subschema { node, pointer: here.to_string(), base: base.as_str().into(), draft };
                self.add_anchor((uri::split_fragment(base).0.to_string(), name.to_string()), sub, key)?;
            }
        }
        Ok(())
    }

    /// Records an anchor; the same name for another subschema of one resource is refused.
    fn add_anchor(&mut self, key: (String, String), sub: Subschema<'a>, keyword: &str) -> Result<()> {
        let at = format!("{}/{keyword}", sub.pointer);
        let known = self.anchors.entry(key.clone()).or_insert(sub.clone());
        if !std::ptr::eq(known.node, sub.node) {
            let other = if known.pointer.is_empty() { "/" } else { &known.pointer };
            return Err(invalid(
                &at,
                keyword,
                &format!("#{} is also the anchor of {other} in {} (which one a $ref means is undefined)", key.1, key.0),
            ));
        }
        Ok(())
    }

    /// A child subschema, made with its parent's base URI and draft, with its own id
    /// applied to the base and its own draft. (Subschemas that [`Resources::new`] and
    /// [`Resources::resolve`] return are entered already: an id relative to a folder
    /// would move the base twice.)
    pub fn enter(&self, sub: &Subschema<'a>) -> Subschema<'a> {
        let Some(obj) = sub.node.as_object() else { return sub.clone() };
        let draft = obj.get("$schema").and_then(Value::as_str).and_then(Draft::from_metaschema).unwrap_or(sub.draft);
        let mut base = sub.base.clone();
        if let Some(ident) = resource_id(sub.node, draft) {
            if let Ok(target) = join(&sub.base, ident, &sub.pointer, draft.id_keyword()) {
                base = uri::split_fragment(&target).0.into();
            }
        }
        Subschema { node: sub.node, pointer: sub.pointer.clone(), base, draft }
    }

    /// The subschema `reference` (a `$ref` of `sub`) points to.
    pub fn resolve(&self, sub: &Subschema<'a>, reference: &Value) -> Result<Subschema<'a>> {
        let Some(text) = reference.as_str() else {
            return Err(invalid(&format!("{}/$ref", sub.pointer), "$ref", "must be a string"));
        };
        let key = (sub.base.clone(), text.to_string());
        if let Some(found) = self.resolved.borrow().get(&key) {
            return Ok(found.clone());
        }
        let found = self.resolve_anew(sub, text)?;
        self.resolved.borrow_mut().insert(key, found.clone());
        Ok(found)
    }

    /// The subschema a `$dynamicRef` (`keyword`; or `$recursiveRef`) of `sub` points to,
    /// where that does not depend on the path a value is reached by: where the reference
    /// would lead a `$ref`, unless the target declares the dynamic anchor the reference
    /// names (`"$recursiveAnchor": true` for `$recursiveRef`) and another subschema of the
    /// documents declares it too. Then the outermost resource of the dynamic scope that
    /// declares it, where every way into `sub`'s resource has the same one (see the
    /// `dynamic` module: the 2020-12 metaschema's `"#meta"`); None where ways differ.
    pub fn resolve_dynamic(&self, sub: &Subschema<'a>, keyword: &str, reference: &Value) -> Result<Option<Subschema<'a>>> {
        // The errors of `resolve`, at this keyword.
        let target = self.resolve(sub, reference).map_err(|e| match e {
            Error::Schema { kind, message, .. } => {
                let why = message.split_once(": ").map_or(message.as_str(), |(_, why)| why).to_string();
                schema_error(kind, &format!("{}/{keyword}", sub.pointer), keyword, &why)
            }
            e => e,
        })?;
        let name = if keyword == "$recursiveRef" {
            if target.node.get("$recursiveAnchor") != Some(&Value::Bool(true)) {
                return Ok(Some(target));
            }
            String::new()
        } else {
            let frag = reference.as_str().map(|r| uri::split_fragment(r).1).unwrap_or_default();
            if frag.is_empty() || frag.starts_with('/') || target.node.get("$dynamicAnchor").and_then(Value::as_str) != Some(frag)
            {
                return Ok(Some(target));
            }
            frag.to_string()
        };
        if self.dynamic_anchors.get(&name).map_or(0, BTreeSet::len) <= 1 {
            return Ok(Some(target));
        }
        self.scoped_target(&sub.base, &name, target)
    }

    /// [`Resources::resolve`] without the memo.
    fn resolve_anew(&self, sub: &Subschema<'a>, reference: &str) -> Result<Subschema<'a>> {
        let at = format!("{}/$ref", sub.pointer);
        let target = join(&sub.base, reference, &sub.pointer, "$ref")?;
        let (doc_uri, frag) = uri::split_fragment(&target);
        let Some(&(doc, ref doc_pointer, draft)) = self.docs.get(doc_uri) else {
            return Err(invalid(
                &at,
                "$ref",
                &format!("cannot resolve `{reference}` (no schema for {doc_uri}; pass resolver=...)"),
            ));
        };
        if !frag.is_empty() && !frag.starts_with('/') {
            return match self.anchors.get(&(doc_uri.to_string(), frag.to_string())) {
                Some(s) => Ok(s.clone()),
                None => Err(invalid(&at, "$ref", &format!("`{reference}` names an anchor `{frag}` that does not exist"))),
            };
        }
        let (mut node, mut base, mut path, mut draft) = (doc, doc_uri.to_string(), doc_pointer.clone(), draft);
        for raw in frag.split('/').skip(1) {
            let token = uri::percent_decode(raw).replace("~1", "/").replace("~0", "~");
            node = match node {
                Value::Object(m) if m.contains_key(&token) => &m[&token],
                Value::Array(a) if is_index(&token) && token.parse::<usize>().is_ok_and(|i| i < a.len()) => {
                    &a[token.parse::<usize>().unwrap_or(0)]
                }
                _ => return Err(invalid(&at, "$ref", &format!("`{reference}` points to nothing (no `{token}`)"))),
            };
            path.push('/');
            path.push_str(&escape_pointer(&token));
            // The draft a subschema on the way names holds below it (see `node_draft`).
            draft = named_draft(node, &path).ok().flatten().unwrap_or(draft);
            if let Some(ident) = resource_id(node, draft) {
                base = uri::split_fragment(&join(&base, ident, &path, draft.id_keyword())?).0.to_string();
            }
        }
        Ok(Subschema { node, pointer: path, base: base.into(), draft })
    }

    /// The root document.
    pub fn root(&self) -> Option<&'a Value> {
        self.root
    }
}

/// The id that makes `node` a resource of its own (not an anchor-only `#name`, and not
/// one that a sibling `$ref` hides, as it does before draft 2019-09).
fn resource_id(node: &Value, draft: Draft) -> Option<&str> {
    if node.get("$ref").is_some() && draft < Draft::Draft2019 {
        return None;
    }
    node.get(draft.id_keyword()).and_then(Value::as_str).filter(|i| !i.starts_with('#'))
}

/// Is `token` an array index as JSON pointers write one (digits, no leading zero)?
fn is_index(token: &str) -> bool {
    !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit()) && (token == "0" || !token.starts_with('0'))
}

/// Does `node` or a subschema below it have a `$ref`? (A walk with its own stack: schemas
/// nest as deep as their documents.)
fn holds_ref(node: &Value) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.get("$ref").is_some() {
            return true;
        }
        stack.extend(children(n).into_iter().map(|(child, _)| child));
    }
    false
}
