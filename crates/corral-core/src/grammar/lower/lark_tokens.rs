//! Lark's rule that a terminal matches a non-empty string, checked on the lowered
//! terminals.

use crate::util::hash::{HashMap, HashMapExt, HashSet};

use super::*;
use crate::error::Result;
use crate::frontend::ast::{EmbeddedSchema, Expr, GrammarAst};
use crate::frontend::scanner::grammar_error;

impl<'a> Lowering<'a> {
    /// Lark's Earley parser refuses a token that matches the empty string (a TERMINAL, a
    /// string or a regex in a rule it keeps, or an `%ignore` token): so does corral, at
    /// the token. Lark keeps the start rule and, repeatedly, every rule that another kept
    /// rule uses (so two unused rules that use each other are kept). A `*` or `+` becomes a
    /// helper rule of its own there, so a rule that uses itself inside one is kept too.
    pub(super) fn check_lark_token_widths(&mut self, start: &'a str) -> Result<()> {
        let ast: &'a GrammarAst = self.ast;
        let terminals: HashSet<&str> = ast.rules.iter().filter(|r| r.is_terminal).map(|r| r.name.as_str()).collect();
        let is_terminal = |name: &str| terminals.contains(name);
        let mut uses: HashMap<&'a str, HashSet<&'a str>> = HashMap::new();
        // A JSON Schema's rules inside the grammar follow JSON's layout, not Lark's tokens.
        for r in ast.rules.iter().filter(|r| !r.is_terminal && !EmbeddedSchema::is_inner_rule(&r.name)) {
            let entry = uses.entry(r.name.as_str()).or_default();
            let mut todo: Vec<(&'a Expr, bool)> = vec![(&r.expr, false)];
            while let Some((e, in_loop)) = todo.pop() {
                match e {
                    Expr::Ref { name, .. } if !is_terminal(name) && (in_loop || *name != r.name) => {
                        entry.insert(name.as_str());
                    }
                    Expr::Seq(v) | Expr::Alt(v) | Expr::And { exprs: v, .. } => todo.extend(v.iter().map(|x| (x, in_loop))),
                    Expr::Repeat { expr, max, .. } => todo.push((expr, in_loop || max.is_none())),
                    Expr::Not { expr, .. } | Expr::Except { expr, .. } => todo.push((expr, in_loop)),
                    Expr::Perm { .. } => todo.extend(e.children().map(|x| (x, true))),
                    Expr::Ref { .. } | Expr::Term { .. } | Expr::Empty => {}
                }
            }
        }
        // The greatest set of rules each used by a kept rule (or the start): drop rules
        // no kept rule uses, one by one, updating the counts of what they use (linear,
        // where re-checking every rule until nothing changes is quadratic on chains).
        let mut users: HashMap<&'a str, usize> = uses.keys().map(|&r| (r, 0)).collect();
        for used in uses.values() {
            for r in used {
                if let Some(n) = users.get_mut(r) {
                    *n += 1;
                }
            }
        }
        let mut kept: HashSet<&'a str> = uses.keys().copied().collect();
        let mut unused: Vec<&'a str> = users.iter().filter(|&(r, &n)| n == 0 && *r != start).map(|(&r, _)| r).collect();
        while let Some(r) = unused.pop() {
            if !kept.remove(r) {
                continue;
            }
            for u in &uses[r] {
                if let Some(n) = users.get_mut(u) {
                    *n -= 1;
                    if *n == 0 && *u != start {
                        unused.push(u);
                    }
                }
            }
        }
        let mut tokens: Vec<(&'a Expr, Option<&'a str>)> = ast.ignore.iter().map(|e| (e, None)).collect();
        let mut kept: Vec<&'a str> = kept.into_iter().collect();
        kept.sort_by_key(|r| self.defs[r].1);
        for rule in kept {
            let mut todo: Vec<&'a Expr> = self.defs[rule].0.iter().rev().copied().collect();
            while let Some(e) = todo.pop() {
                match e {
                    Expr::Ref { name, .. } if is_terminal(name) => tokens.push((e, Some(name))),
                    Expr::Ref { .. } => {}
                    Expr::Term { .. } => tokens.push((e, None)),
                    Expr::Seq(v) | Expr::Alt(v) | Expr::And { exprs: v, .. } => todo.extend(v.iter()),
                    Expr::Repeat { expr, .. } | Expr::Not { expr, .. } | Expr::Except { expr, .. } => todo.push(expr),
                    Expr::Perm { .. } => todo.extend(e.children()),
                    Expr::Empty => {}
                }
            }
        }
        tokens.sort_by_key(|(e, _)| e.pos());
        for (e, terminal) in tokens {
            let pos = match terminal {
                Some(name) => self.defs[name].1,
                None => e.pos().unwrap_or_default(),
            };
            let empty = match self.expr_reg(e)? {
                Reg::Hir(p) => p.matches_empty(),
                Reg::Dfa { dfa, .. } => dfa.accepts_empty(),
                Reg::Void(_) => false,
            };
            if empty {
                let what = match terminal {
                    Some(name) => format!("terminal `{name}`"),
                    None => "this token".to_string(),
                };
                return Err(grammar_error(
                    pos,
                    format!("{what} matches the empty string, which Lark's Earley parser does not allow in a token (make it non-empty and its use optional)"),
                ));
            }
        }
        Ok(())
    }
}
