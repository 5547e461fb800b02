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
//! aside, and through each reference: a `$ref`'s target; for a dynamic reference its static
//! target and, through a node of its name, every resource that declares the name: a
//! superset of the ways there are), and a search from the root over (resource, first
//! declarer so far) finds, per resource, every first declarer a way into it can have.
//! Where that is one resource for the reference's own, the reference means that
//! resource's anchor, on every way; where ways differ, the reference stays unsupported. A
//! resource reached with more than a few first declarers is undecidable outright, and so
//! is all that it enters, which bounds the search by a few times the ways.

use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::rc::Rc;

use serde_json::Value;

use super::{uri, Draft, Resources, Subschema};
use crate::error::Result;
use crate::util::hash::HashMap;

/// How many first declarers are told apart per resource: a resource reached with more is
/// ambiguous, and so is every resource entered from it (at least two of its declarers
/// pass on unchanged), so the search marks them all at once instead of carrying each one
/// (which costs the product of resources and declarers, and more per reference).
const FIRST_DECLARERS_KEPT: usize = 3;

/// The resources and the ways between them, numbered; each anchor name a dynamic
/// reference may mean has a node of its own, entered from every such reference and
/// entering every resource that declares the name (so that n references to a name that n
/// resources declare make 2n edges, not n²).
#[derive(Debug, Default)]
struct Ways {
    /// The node of each resource URI.
    ids: HashMap<String, u32>,
    /// Per node: its resource URI (a name's node: NUL and the name).
    uris: Vec<String>,
    /// Per node: the nodes it enters.
    next: Vec<Vec<u32>>,
}

impl Ways {
    fn id(&mut self, key: &str) -> u32 {
        if let Some(&id) = self.ids.get(key) {
            return id;
        }
        let id = self.next.len() as u32;
        self.ids.insert(key.to_string(), id);
        self.uris.push(key.to_string());
        self.next.push(Vec::new());
        id
    }
}

/// Per node, what the search found: the first declarers (node ids; None for none yet) of
/// its ways in, or None where there are more than [`FIRST_DECLARERS_KEPT`] (ambiguous).
type FirstDeclarers = Vec<Option<Vec<Option<u32>>>>;

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
    /// The ways between resources, once built.
    ways: OnceCell<Ways>,
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
            self.sites.push(Subschema { node, pointer: here.to_string(), base: base.into(), draft });
        }
    }

    /// Records that `sub` declares the dynamic anchor `name` in its resource.
    pub(super) fn declare(&mut self, name: &str, sub: Subschema<'a>) {
        self.declarers.entry(name.to_string()).or_default().entry(sub.base.to_string()).or_insert(sub);
    }
}

impl<'a> Resources<'a> {
    /// The subschema a dynamic reference naming `name`, held by a subschema of resource
    /// `resource`, means on every way there (`target`: where it would lead a `$ref`, what
    /// it means where no resource on the way declares the name); None where ways differ.
    pub(super) fn scoped_target(&self, resource: &str, name: &str, target: Subschema<'a>) -> Result<Option<Subschema<'a>>> {
        let firsts = self.first_declarers(name)?;
        let ways = self.ways();
        let Some(Some(found)) = ways.ids.get(resource).map(|&id| &firsts[id as usize]) else { return Ok(None) };
        Ok(match found.as_slice() {
            [None] => Some(target),
            [Some(d)] => self.scope.declarers.get(name).and_then(|by| by.get(&ways.uris[*d as usize])).cloned(),
            _ => None,
        })
    }

    /// Per node, the first declarers of `name` its ways in from the root can have
    /// (memoized per name; see [`FIRST_DECLARERS_KEPT`]).
    fn first_declarers(&self, name: &str) -> Result<Rc<FirstDeclarers>> {
        if let Some(found) = self.scope.searched.borrow().get(name) {
            return Ok(found.clone());
        }
        let ways = self.ways();
        let n = ways.next.len();
        let mut declares = vec![false; n];
        for uri in self.scope.declarers.get(name).into_iter().flat_map(|d| d.keys()) {
            if let Some(&id) = ways.ids.get(uri) {
                declares[id as usize] = true;
            }
        }
        let mut found: FirstDeclarers = vec![Some(Vec::new()); n];
        let mut queue = VecDeque::new();
        if let Some(&root) = ways.ids.get(&self.scope.root) {
            let first = declares[root as usize].then_some(root);
            found[root as usize] = Some(vec![first]);
            queue.push_back((root, first));
        }
        let mut steps = 0usize;
        while let Some((here, first)) = queue.pop_front() {
            for &next in &ways.next[here as usize] {
                steps += 1;
                if steps % 4096 == 0 {
                    crate::util::interrupt::check()?;
                }
                let first = first.or_else(|| declares[next as usize].then_some(next));
                let Some(known) = &mut found[next as usize] else { continue };
                if known.contains(&first) {
                    continue;
                }
                if known.len() < FIRST_DECLARERS_KEPT {
                    known.push(first);
                    queue.push_back((next, first));
                    continue;
                }
                // Ambiguous, and so is everything entered from it.
                let mut stack = vec![next];
                while let Some(node) = stack.pop() {
                    if found[node as usize].take().is_some() {
                        stack.extend(ways.next[node as usize].iter().copied());
                    }
                }
            }
        }
        let found = Rc::new(found);
        self.scope.searched.borrow_mut().insert(name.to_string(), found.clone());
        Ok(found)
    }

    /// The ways between resources (built once): nested ones, and through each reference
    /// its target; a dynamic reference also enters its name's node, which enters every
    /// resource declaring the name.
    fn ways(&self) -> &Ways {
        self.scope.ways.get_or_init(|| {
            let mut ways = Ways::default();
            for (outer, inner) in &self.scope.nested {
                let (a, b) = (ways.id(outer), ways.id(inner));
                ways.next[a as usize].push(b);
            }
            for (name, declaring) in &self.scope.declarers {
                let node = ways.id(&format!("\0{name}"));
                for uri in declaring.keys() {
                    let d = ways.id(uri);
                    ways.next[node as usize].push(d);
                }
            }
            for site in &self.scope.sites {
                let from = ways.id(&site.base);
                for keyword in REFERENCES {
                    let Some(reference) = site.node.get(keyword) else { continue };
                    // (A reference that does not resolve is reported where it is translated.)
                    if let Ok(target) = self.resolve(site, reference) {
                        let to = ways.id(&target.base);
                        ways.next[from as usize].push(to);
                    }
                    let name = match keyword {
                        "$ref" => continue,
                        "$recursiveRef" => "",
                        _ => reference.as_str().map(|r| uri::split_fragment(r).1).unwrap_or_default(),
                    };
                    if self.scope.declarers.contains_key(name) {
                        let node = ways.id(&format!("\0{name}"));
                        ways.next[from as usize].push(node);
                    }
                }
            }
            ways.id(&self.scope.root);
            ways
        })
    }
}
