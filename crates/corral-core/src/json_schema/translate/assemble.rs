//! The passes of a translation and the grammar they make.
//!
//! A value rule may turn out empty only after something recursive referred to it (a
//! property that requires the object itself, forever): the pass is redone with it known
//! empty, so that whatever needs it is dropped, as for any empty branch.

use crate::util::hash::{HashMap, HashMapExt, HashSet, HashSetExt};

use super::expr::{rule, seq, AT};
use super::shape::SubNode;
use super::share;
use super::{Place, Rules, Translator};
use crate::error::{Error, Result};
use crate::frontend::ast::{Distinct, Expr, GrammarAst, PermEntry, RuleDef};

impl<'a> Translator<'a> {
    /// The grammar of the whole schema (start rule `start`).
    pub(crate) fn grammar(&mut self) -> Result<GrammarAst> {
        let start = self.passes()?;
        if start.is_none() && self.pass.depth_cut {
            // Refused for its depth, unless it allows nothing at any depth (an object that
            // requires itself): the translation without an indent tells them apart.
            let indent = self.opts.indent.take();
            let plain = self.passes();
            self.opts.indent = indent;
            if plain?.is_none() {
                return Err(Error::EmptyLanguage { what: "the schema allows no JSON value".into() });
            }
            return Err(Self::limit_at(
                "",
                "",
                "with indent, this schema allows no value that nests few enough containers deep",
                "max_indent_depth",
                self.limits.max_indent_depth,
            ));
        }
        let Some(start) = start else {
            return Err(Error::EmptyLanguage { what: "the schema allows no JSON value".into() });
        };
        if !self.known_empty.is_empty() && self.may_be_unproductive() {
            let stuck = unproductive(&self.pass.rules);
            if !stuck.is_empty() {
                let mut names: Vec<&String> = stuck.iter().collect();
                names.sort();
                return Err(super::super::resources::unsupported(
                    "",
                    "",
                    &format!("rules {:?} allow no finite value", &names[..names.len().min(5)]),
                ));
            }
        }
        Ok(self.ast(&start))
    }

    /// Runs passes until no recursive value rule is newly found empty; the start rule's
    /// name (None: the schema allows no value).
    fn passes(&mut self) -> Result<Option<String>> {
        for _ in 0..self.limits.max_schema_passes {
            self.pass = Default::default();
            self.warnings.clear();
            let root = SubNode::schema(self.root.clone());
            // Arguments in an XML layout: the top object as parameters.
            let place = if self.opts.xml.is_some() { Place::XmlObject } else { Place::Json };
            let start = self.value_rule_in(&[root], 0, place)?;
            let mut empty = std::mem::take(&mut self.pass.found_empty);
            // Without a recursive reference the rules form a tree of non-empty bodies, all
            // productive; only recursion can make a rule need itself forever.
            if self.may_be_unproductive() {
                for name in unproductive(&self.pass.rules) {
                    if let Some(key) = self.pass.rule_keys.get(&name) {
                        empty.insert(key.clone());
                    }
                }
            }
            if empty.is_empty() {
                return Ok(start);
            }
            self.known_empty.extend(empty);
        }
        Err(Self::limit_at(
            "",
            "",
            "the schema needed too many passes to drop its recursive subschemas that allow no value",
            "max_schema_passes",
            self.limits.max_schema_passes,
        ))
    }

    /// False when no rule can need itself forever: then every rule referred to before its
    /// body was known (the only way into a cycle) has an alternative that finishes
    /// without any rule.
    fn may_be_unproductive(&self) -> bool {
        self.pass.early.iter().any(|name| match self.pass.rules.get(name) {
            Some(Some(body)) => !productive(body, &HashSet::new()),
            _ => true,
        })
    }

    /// The grammar: `start` (with whitespace around it when flexible), then every rule
    /// (the pass's rules are moved into it). A value inside other text whose keys or items the matcher must keep distinct is
    /// marked as a JSON region, where that check reads the output as JSON.
    fn ast(&mut self, start: &str) -> GrammarAst {
        let (start, merged) = share::merged(std::mem::take(&mut self.pass.rules), start);
        let start = start.as_str();
        let mut rules = Vec::with_capacity(merged.len() + 2);
        let ws = self.ws_body();
        if self.opts.xml.is_some() {
            // The parameters hold their whitespace; the JSON values among them are the
            // regions, needed only where some object is open to other keys.
            rules.push(def("start", rule(start)));
            rules.extend(ws.map(|body| def(WS, body)));
            for (name, body) in merged {
                let body = if self.open_keys { body } else { without_regions(body) };
                rules.push(def(&name, body));
            }
            return GrammarAst { rules, ..Default::default() };
        }
        let value = if self.opts.json_region && self.open_keys {
            let entries = vec![PermEntry { expr: rule(start), required: true, repeat: false, distinct: Distinct::Json }];
            Expr::Perm { sep: Box::new(Expr::Empty), entries, min: 1, max: Some(1), pos: AT }
        } else {
            rule(start)
        };
        let start_body = if ws.is_some() { seq(vec![rule(WS), value, rule(WS)]) } else { value };
        rules.push(def("start", start_body));
        if let Some(body) = ws {
            rules.push(def(WS, body));
        }
        rules.extend(merged.into_iter().map(|(name, body)| def(&name, body)));
        GrammarAst { rules, ..Default::default() }
    }
}

/// The whitespace rule's name.
const WS: &str = "ws";

/// `e` with every one-entry `perm!` marking a JSON region replaced by its entry.
fn without_regions(e: Expr) -> Expr {
    match e {
        Expr::Perm { entries, .. } if entries.len() == 1 && entries[0].distinct == Distinct::Json => {
            without_regions(entries.into_iter().next().map(|p| p.expr).unwrap_or(Expr::Empty))
        }
        Expr::Seq(parts) => Expr::Seq(parts.into_iter().map(without_regions).collect()),
        Expr::Alt(parts) => Expr::Alt(parts.into_iter().map(without_regions).collect()),
        Expr::Repeat { expr, min, max, pos } => Expr::Repeat { expr: Box::new(without_regions(*expr)), min, max, pos },
        Expr::Perm { sep, entries, min, max, pos } => Expr::Perm {
            sep: Box::new(without_regions(*sep)),
            entries: entries.into_iter().map(|p| PermEntry { expr: without_regions(p.expr), ..p }).collect(),
            min,
            max,
            pos,
        },
        other => other,
    }
}

fn def(name: &str, expr: Expr) -> RuleDef {
    RuleDef { name: name.to_string(), expr, pos: super::expr::AT, is_terminal: false }
}

/// Can `e` finish, given the rules known `done` (productive)?
fn productive(e: &Expr, done: &HashSet<String>) -> bool {
    match e {
        Expr::Empty | Expr::Term { .. } | Expr::And { .. } | Expr::Not { .. } | Expr::Except { .. } => true,
        // (The whitespace rule is a terminal the translator always defines.)
        Expr::Ref { name, .. } => name == WS || done.contains(name),
        Expr::Seq(items) => items.iter().all(|x| productive(x, done)),
        Expr::Alt(items) => items.iter().any(|x| productive(x, done)),
        Expr::Repeat { expr, min, .. } => *min == 0 || productive(expr, done),
        Expr::Perm { entries, min, .. } => {
            entries.iter().filter(|x| x.required).all(|x| productive(&x.expr, done))
                && (*min == 0 || entries.iter().any(|x| productive(&x.expr, done)))
        }
    }
}

fn refs<'e>(e: &'e Expr, out: &mut Vec<&'e str>) {
    match e {
        Expr::Ref { name, .. } => out.push(name),
        _ => e.children().for_each(|x| refs(x, out)),
    }
}

/// The rules that can never finish (need themselves, forever). A worklist: a rule is
/// looked at again only when a rule it names becomes productive.
fn unproductive(rules: &Rules) -> HashSet<String> {
    let mut users: HashMap<&str, Vec<&str>> = HashMap::new();
    for (name, body) in rules {
        if let Some(body) = body {
            let mut out = Vec::new();
            refs(body, &mut out);
            for r in out {
                users.entry(r).or_default().push(name);
            }
        }
    }
    let mut done: HashSet<String> = HashSet::new();
    let mut todo: Vec<&str> = rules.iter().filter(|(_, b)| b.is_some()).map(|(n, _)| n.as_str()).collect();
    while let Some(name) = todo.pop() {
        if done.contains(name) {
            continue;
        }
        let Some(Some(body)) = rules.get(name) else { continue };
        if !productive(body, &done) {
            continue;
        }
        done.insert(name.to_string());
        todo.extend(users.get(name).into_iter().flatten().filter(|u| !done.contains(**u)));
    }
    rules.iter().filter(|(n, b)| b.is_some() && !done.contains(n.as_str())).map(|(n, _)| n.clone()).collect()
}
