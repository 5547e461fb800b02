//! Dynamic references (`$dynamicRef`, `$recursiveRef`) where several resources declare
//! the anchor they name.
//!
//! Such a reference means the anchor of the *outermost* resource in the dynamic scope that
//! declares it: of the resources entered on the way from the root to the reference (by a
//! reference or by nesting a subschema with its own `$id`), the first that declares it.
//! That depends on the way a value is reached, which a grammar rule does not know; but
//! often every way agrees. The 2020-12 metaschema is entered first, and every vocabulary
//! metaschema, which all declare `"$dynamicAnchor": "meta"`, only through it: each
//! `"$dynamicRef": "#meta"` inside them means the root metaschema's.
//!
//! So the index records which resource each resource enters (by nesting, a definition
//! aside, and through each reference: a `$ref`'s target, and for a dynamic reference its static target and every
//! resource that declares a name it may mean, a superset of the ways there are), and a
//! search from the root over (resource, first declarer so far) finds, per resource, every
//! first declarer a way into it can have. Where that is one resource for the reference's
//! own, the reference means that resource's anchor, on every way; where ways differ, the
//! reference stays unsupported.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use serde_json::Value;

use super::{uri, Draft, Resources, Subschema};
use crate::util::hash::{HashMap, HashSet};

/// Per resource URI: the first declarers (resource URIs; None for none yet) its ways in have.
type FirstDeclarers = HashMap<String, BTreeSet<Option<String>>>;

/// What the index of a translation's documents keeps for dynamic references.
#[derive(Debug, Default)]
pub(super) struct ScopeIndex<'a> {
    /// The root resource's URI.
    pub(super) root: String,
    /// Per anchor name ("" for `"$recursiveAnchor": true`): the resources that declare it,
    /// each with the subschema that does.
    declarers: HashMap<String, BTreeMap<String, Subschema<'a>>>,
    /// (outer, inner): a subschema with its own `$id` nested in another resource.
    nested: Vec<(String, String)>,
    /// Every subschema that holds a reference of any kind.
    sites: Vec<Subschema<'a>>,
    /// The first declarers of each anchor name, once searched.
    searched: RefCell<HashMap<String, Rc<FirstDeclarers>>>,
}

/// The keywords that enter another resource through a reference.
const REFERENCES: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

impl<'a> ScopeIndex<'a> {
    /// Records subschema `node` (at `here`, of `draft`), whose resource is `base` inside the
    /// resource `outer` of its parent.
    pub(super) fn note(&mut self, node: &'a Value, outer: &str, base: &str, draft: Draft, here: &str) {
        // A definition (`$defs`, `definitions`) is entered only through a reference, which
        // makes its own way in.
        let mut tokens = here.rsplitn(3, '/');
        let definition = matches!((tokens.next(), tokens.next()), (Some(_), Some("$defs" | "definitions")));
        if outer != base && !definition {
            self.nested.push((outer.to_string(), base.to_string()));
        }
        if REFERENCES.iter().any(|k| node.get(k).is_some()) {
            self.sites.push(Subschema { node, pointer: here.to_string(), base: base.to_string(), draft });
        }
    }

    /// Records that `sub` declares the dynamic anchor `name` in its resource.
    pub(super) fn declare(&mut self, name: &str, sub: Subschema<'a>) {
        self.declarers.entry(name.to_string()).or_default().entry(sub.base.clone()).or_insert(sub);
    }
}

impl<'a> Resources<'a> {
    /// The subschema a dynamic reference naming `name`, held by a subschema of resource
    /// `resource`, means on every way there (`target`: where it would lead a `$ref`, what
    /// it means where no resource on the way declares the name); None where ways differ.
    pub(super) fn scoped_target(&self, resource: &str, name: &str, target: Subschema<'a>) -> Option<Subschema<'a>> {
        let firsts = self.first_declarers(name);
        let ways = firsts.get(resource)?;
        if ways.len() != 1 {
            return None;
        }
        match ways.iter().next()? {
            None => Some(target),
            Some(declarer) => self.scope.declarers.get(name)?.get(declarer).cloned(),
        }
    }

    /// Per resource, the first declarers of `name` its ways in from the root can have
    /// (memoized per name).
    fn first_declarers(&self, name: &str) -> Rc<FirstDeclarers> {
        if let Some(found) = self.scope.searched.borrow().get(name) {
            return found.clone();
        }
        let edges = self.resource_edges();
        let declares = |r: &str| self.scope.declarers.get(name).is_some_and(|d| d.contains_key(r));
        let root = self.scope.root.clone();
        let start = (root.clone(), declares(&root).then(|| root.clone()));
        let mut seen: HashSet<(String, Option<String>)> = HashSet::default();
        let mut queue = VecDeque::from([start.clone()]);
        seen.insert(start);
        let mut found = FirstDeclarers::default();
        while let Some((here, first)) = queue.pop_front() {
            found.entry(here.clone()).or_default().insert(first.clone());
            for next in edges.get(&here).into_iter().flatten() {
                let state = (next.clone(), first.clone().or_else(|| declares(next).then(|| next.clone())));
                if seen.insert(state.clone()) {
                    queue.push_back(state);
                }
            }
        }
        let found = Rc::new(found);
        self.scope.searched.borrow_mut().insert(name.to_string(), found.clone());
        found
    }

    /// The resources each resource enters: nested ones, and through each reference its
    /// target; a dynamic reference may also mean any resource declaring its name.
    fn resource_edges(&self) -> HashMap<String, BTreeSet<String>> {
        let mut edges: HashMap<String, BTreeSet<String>> = HashMap::default();
        for (outer, inner) in &self.scope.nested {
            edges.entry(outer.clone()).or_default().insert(inner.clone());
        }
        for site in &self.scope.sites {
            for keyword in REFERENCES {
                let Some(reference) = site.node.get(keyword) else { continue };
                let into = edges.entry(site.base.clone()).or_default();
                // (A reference that does not resolve is reported where it is translated.)
                if let Ok(target) = self.resolve(site, reference) {
                    into.insert(target.base);
                }
                let name = match keyword {
                    "$ref" => continue,
                    "$recursiveRef" => "",
                    _ => reference.as_str().map(|r| uri::split_fragment(r).1).unwrap_or_default(),
                };
                into.extend(self.scope.declarers.get(name).into_iter().flat_map(|d| d.keys().cloned()));
            }
        }
        edges
    }
}
