//! The rest of the AST to BNF: references, groups and repetitions become helper rules
//! (repetitions left recursive), `perm!` lists become list drafts.

use super::*;
use crate::error::{Error, Result};
use crate::frontend::ast::{Distinct, Expr, Pos, Term};
use crate::grammar::perm::Perm;

/// A repetition of a nonterminal whose counts reach past this is counted by the parser
/// (see [`Lowering::counted_list`]) instead of spelled out as a chain of optional rules.
pub(super) const MAX_UNROLLED_COUNT: usize = 64;

/// Expression lowered to alternatives of symbol sequences, before normalization.
pub(super) type Alts = Vec<Vec<Sym>>;

/// A `perm!` during lowering: its list nonterminal, and one nonterminal per entry and for
/// the separator (so that no transformation merges or renames them). The list's
/// productions stand in for it (making it productive and its parts reachable) until
/// [`build_perms`] writes the real ones.
pub(super) struct PermDraft {
    pub(super) list: u32,
    pub(super) sep: Option<u32>,
    pub(super) entries: Vec<u32>,
    pub(super) required: Vec<bool>,
    pub(super) repeat: Vec<bool>,
    pub(super) distinct: Vec<Distinct>,
    pub(super) min: u32,
    pub(super) max: Option<u32>,
    pub(super) pos: Pos,
    /// For a counted repetition (see [`Lowering::counted_list`]): the rule that stands
    /// for it (the list, optional when its least count is 0). None for a `perm!`.
    pub(super) counted: Option<u32>,
}

impl PermDraft {
    /// The spec over the entries still alive (`alive`: per entry); the indices kept.
    pub(super) fn spec(&self, alive: &[bool], sep_alive: bool) -> (Perm, Vec<usize>) {
        let kept: Vec<usize> = (0..self.entries.len()).filter(|&i| alive[i]).collect();
        let perm = Perm {
            list: self.list,
            sep: self.sep.filter(|_| sep_alive).map(Sym::n),
            entries: kept.iter().map(|&i| Sym::n(self.entries[i])).collect(),
            required: kept.iter().map(|&i| self.required[i]).collect(),
            repeat: kept.iter().map(|&i| self.repeat[i]).collect(),
            distinct: kept.iter().map(|&i| self.distinct[i]).collect(),
            min: self.min,
            prod_entry: Vec::new(),
            // Without its separator a list has one entry at most.
            max: if self.sep.is_some() && !sep_alive { Some(self.max.unwrap_or(1).min(1)) } else { self.max },
        };
        (perm, kept)
    }

    /// Can this list be nonempty, given which entries can produce anything?
    pub(super) fn feasible(&self, bnf: &[Alts]) -> bool {
        let alive: Vec<bool> = self.entries.iter().map(|&e| !bnf[e as usize].is_empty()).collect();
        if (0..alive.len()).any(|i| self.required[i] && !alive[i]) {
            return false;
        }
        let sep_alive = self.sep.is_none_or(|s| !bnf[s as usize].is_empty());
        let (perm, _) = self.spec(&alive, sep_alive);
        let empty = vec![0u64; perm.width()];
        let adding = perm.adding(&empty);
        (0..perm.entries.len()).any(|i| perm.allows(&adding, &empty, i))
    }
}

impl<'a> Lowering<'a> {
    /// Records a piece that matches no string (once per place and reason).
    pub(super) fn void(&mut self, pos: Pos, why: String) -> usize {
        if let Some(i) = self.voids.iter().position(|(p, w)| *p == pos && *w == why) {
            return i;
        }
        self.voids.push((pos, why));
        self.voids.len() - 1
    }

    /// An operator's result: an empty language is [`Reg::Void`] (noted, not an error).
    pub(super) fn op_result(&mut self, built: Result<Reg>, pos: Pos, op: &str, why_empty: &str) -> Result<Reg> {
        match built {
            Ok(reg) => Ok(reg),
            Err(Error::EmptyLanguage { .. }) => {
                Ok(Reg::Void(self.void(pos, format!("{op}(...) matches no string ({why_empty})"))))
            }
            Err(e) => Err(op_error(e, pos, op)),
        }
    }

    /// The nonterminal standing for void piece `v`: it has no production, so the
    /// productions that use it are dropped with the unproductive ones.
    pub(super) fn void_symbol(&mut self, v: usize) -> Sym {
        if let Some(&n) = self.void_nt.get(&v) {
            return Sym::n(n);
        }
        let (pos, why) = self.voids[v].clone();
        let n = self.new_nt(format!("<void: {why}>"), (String::new(), pos));
        self.void_nt.insert(v, n);
        Sym::n(n)
    }

    pub(super) fn new_nt(&mut self, name: String, origin: (String, Pos)) -> u32 {
        let id = self.nt_names.len() as u32;
        self.nt_names.push(name);
        self.nt_origin.push(origin);
        self.bnf.push(Vec::new());
        id
    }

    /// The nonterminal of a non-regular rule (queued for lowering on first use).
    pub(super) fn rule_nt(&mut self, name: &'a str) -> u32 {
        if let Some(&n) = self.nt_of_rule.get(name) {
            return n;
        }
        let pos = self.defs[name].1;
        let n = self.new_nt(name.to_string(), (name.to_string(), pos));
        self.nt_of_rule.insert(name, n);
        self.worklist.push(name);
        n
    }

    /// One symbol standing for `e` inside rule `owner`.
    pub(super) fn symbol(&mut self, e: &'a Expr, owner: &(String, Pos)) -> Result<Option<Sym>> {
        // Pure regex pieces become regex terminals (merged with their neighbours later);
        // each boolean operator becomes one DFA terminal. What surrounds operators stays
        // grammar structure: the parser reads their pieces as separate terminals, which
        // cannot blow up the way one folded automaton can.
        if self.is_terminal_piece(e)? {
            if matches!(e, Expr::Empty) {
                return Ok(None);
            }
            let reg = self.expr_reg(e)?;
            // (A terminal met before keeps its name: none is made here.)
            if let Reg::Hir(p) = &reg {
                if let Some(&t) = self.terminal_of_key.get(p.key()) {
                    return Ok(Some(Sym::t(t)));
                }
            }
            let name = match e {
                Expr::Ref { name, .. } => name.clone(),
                Expr::Term { term: Term::Literal(s), .. } => format!("{s:?}"),
                _ => owner.0.clone(),
            };
            let t = match reg {
                Reg::Hir(p) => self.terminal(&p, &name, e.pos().or(Some(owner.1)))?,
                Reg::Dfa { dfa, key } => self.dfa_terminal(&dfa, key, &name),
                Reg::Void(v) => {
                    if let Expr::Ref { name, .. } = e {
                        let pos = self.defs[name.as_str()].1;
                        self.void_rule_notes.push((pos, name.clone()));
                    }
                    return Ok(Some(self.void_symbol(v)));
                }
            };
            return Ok(Some(Sym::t(t)));
        }
        match e {
            Expr::Ref { name, .. } => {
                let n = self.rule_nt(self.defs.get_key_value(name.as_str()).map(|(k, _)| *k).unwrap_or(""));
                Ok(Some(Sym::n(n)))
            }
            Expr::Except { .. } | Expr::And { .. } | Expr::Not { .. } => {
                if !self.is_regular_expr(e) {
                    return Err(self.irregular_error(e));
                }
                let op = match e {
                    Expr::And { .. } => "and!",
                    Expr::Not { .. } => "not!",
                    _ => "except!",
                };
                let t = match self.expr_reg(e)? {
                    Reg::Dfa { dfa, key } => self.dfa_terminal(&dfa, key, &format!("{op}({})", owner.0)),
                    Reg::Hir(p) => self.terminal(&p, op, e.pos())?, // operators always build DFAs
                    Reg::Void(v) => return Ok(Some(self.void_symbol(v))),
                };
                Ok(Some(Sym::t(t)))
            }
            Expr::Perm { sep, entries, min, max, pos } => Ok(Some(self.perm(sep, entries, *min, *max, *pos, owner)?)),
            Expr::Seq(_) | Expr::Alt(_) | Expr::Repeat { .. } => {
                let k = self.nt_names.len();
                let n = self.new_nt(format!("{}#{k}", owner.0), owner.clone());
                let alts = self.alts(e, owner)?;
                self.bnf[n as usize] = alts;
                Ok(Some(Sym::n(n)))
            }
            Expr::Empty | Expr::Term { .. } => Ok(None), // handled as regular above
        }
    }

    /// The symbol of a `perm!`: its list nonterminal, made optional when the empty list
    /// is allowed (see [`crate::grammar::perm`]).
    pub(super) fn perm(
        &mut self,
        sep: &'a Expr,
        entries: &'a [crate::frontend::ast::PermEntry],
        min: u32,
        max: Option<u32>,
        pos: Pos,
        owner: &(String, Pos),
    ) -> Result<Sym> {
        // A list's shortest string has `min` entries: bounded as a repetition's count is.
        let cap = self.limits.max_grammar_productions;
        if min as usize > cap {
            return Err(Error::LimitExceeded {
                limit: "max_grammar_productions",
                value: cap,
                context: format!("the least count of the perm! at {pos}"),
            });
        }
        let k = self.nt_names.len();
        let list = self.new_nt(format!("{}#perm{k}", owner.0), owner.clone());
        let part = |lw: &mut Self, e: &'a Expr, what: String| -> Result<u32> {
            let n = lw.new_nt(format!("{}#perm{k}.{what}", owner.0), (owner.0.clone(), e.pos().unwrap_or(pos)));
            let alts = lw.alts(e, owner)?;
            lw.bnf[n as usize] = alts;
            Ok(n)
        };
        let sep_nt = match sep {
            Expr::Empty => None,
            e => Some(part(self, e, "sep".into())?),
        };
        let mut entry_nts = Vec::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            entry_nts.push(part(self, &e.expr, format!("{i}"))?);
        }
        // Stand-in productions: the list produces something once every required entry does
        // (with no required entry, once any entry does); whether enough entries are left
        // for its counts is checked after (see `drop_unproductive_perms`).
        let required_nts: Vec<Sym> = entry_nts.iter().zip(entries).filter(|(_, e)| e.required).map(|(&n, _)| Sym::n(n)).collect();
        let mut stand_in: Alts =
            if required_nts.is_empty() { entry_nts.iter().map(|&e| vec![Sym::n(e)]).collect() } else { vec![required_nts] };
        if let Some(s) = sep_nt {
            stand_in.push(vec![Sym::n(list), Sym::n(s)]);
        }
        self.bnf[list as usize] = stand_in;
        let required: Vec<bool> = entries.iter().map(|e| e.required).collect();
        self.perms.push(PermDraft {
            list,
            sep: sep_nt,
            entries: entry_nts,
            repeat: entries.iter().map(|e| e.repeat).collect(),
            distinct: entries.iter().map(|e| e.distinct).collect(),
            min,
            max,
            pos,
            required: required.clone(),
            counted: None,
        });
        let empty_ok = min == 0 && !required.iter().any(|&r| r);
        if max == Some(0) || !empty_ok {
            // A list allowing no entry matches nothing but "" (or nothing at all).
            if max == Some(0) {
                self.bnf[list as usize].clear();
            }
            if !empty_ok {
                return Ok(Sym::n(list));
            }
        }
        let opt = self.new_nt(format!("{}#perm{k}?", owner.0), owner.clone());
        self.bnf[opt as usize] = vec![vec![], vec![Sym::n(list)]];
        Ok(Sym::n(opt))
    }

    /// A repetition `x{min,max}` counted by the parser: a `perm!` list with `x` as its one
    /// repeatable entry and no separator, whose state carries the count (see
    /// [`crate::grammar::perm`]). Spelled out, it would be a chain of `max` rules (a JSON
    /// array with `maxItems: 100000`). The returned rule is the list, with the empty
    /// string when `min` is 0; if `x` turns out to match the empty string, the least
    /// count is dropped later (see `relax_nullable_counts`).
    pub(super) fn counted_list(&mut self, x: Sym, min: u32, max: Option<u32>, pos: Pos, owner: &(String, Pos)) -> Sym {
        let k = self.nt_names.len();
        let list = self.new_nt(format!("{}#count{k}", owner.0), owner.clone());
        let entry = self.new_nt(format!("{}#count{k}.item", owner.0), owner.clone());
        let whole = self.new_nt(format!("{}#count{k}?", owner.0), owner.clone());
        self.bnf[entry as usize] = vec![vec![x]];
        // Stand-in production until the list's own are written (see `build_perms`).
        self.bnf[list as usize] = vec![vec![Sym::n(entry)]];
        self.bnf[whole as usize] = if min == 0 { vec![vec![], vec![Sym::n(list)]] } else { vec![vec![Sym::n(list)]] };
        self.perms.push(PermDraft {
            list,
            sep: None,
            entries: vec![entry],
            required: vec![false],
            repeat: vec![true],
            distinct: vec![Distinct::No],
            min,
            max,
            pos,
            counted: Some(whole),
        });
        Sym::n(whole)
    }

    /// Alternatives of symbol sequences for `e`.
    pub(super) fn alts(&mut self, e: &'a Expr, owner: &(String, Pos)) -> Result<Alts> {
        match e {
            Expr::Alt(items) => {
                let mut out = Vec::new();
                for it in items {
                    out.extend(self.alts(it, owner)?);
                }
                Ok(out)
            }
            Expr::Seq(items) => {
                let mut seq = Vec::new();
                for it in items {
                    match it {
                        // A nested sequence is spliced in.
                        Expr::Seq(_) if !self.is_terminal_piece(it)? => {
                            let mut inner = self.alts(it, owner)?;
                            if inner.len() == 1 {
                                seq.append(&mut inner[0]);
                            } else if let Some(s) = self.symbol(it, owner)? {
                                seq.push(s);
                            }
                        }
                        _ => {
                            if let Some(s) = self.symbol(it, owner)? {
                                seq.push(s);
                            }
                        }
                    }
                }
                Ok(vec![seq])
            }
            Expr::Repeat { expr, min, max, pos } if !self.is_terminal_piece(e)? => {
                let x = match self.symbol(expr, owner)? {
                    Some(s) => s,
                    None => return Ok(vec![vec![]]),
                };
                let min = *min as usize;
                let cap = self.limits.max_grammar_productions;
                if min > cap {
                    return Err(Error::LimitExceeded {
                        limit: "max_grammar_productions",
                        value: cap,
                        context: format!("the least count of the repetition at {pos}"),
                    });
                }
                if max.map_or(min, |m| m as usize) > MAX_UNROLLED_COUNT {
                    return Ok(vec![vec![self.counted_list(x, min as u32, *max, *pos, owner)]]);
                }
                if max.is_some_and(|m| m as usize > cap) {
                    return Err(Error::LimitExceeded {
                        limit: "max_grammar_productions",
                        value: cap,
                        context: format!("the repetition at {pos}"),
                    });
                }
                match max {
                    None => {
                        // R → X^min | R X  (or ε | R X when min = 0): left recursive.
                        let k = self.nt_names.len();
                        let r = self.new_nt(format!("{}#{k}", owner.0), owner.clone());
                        self.bnf[r as usize] = vec![vec![x; min], vec![Sym::n(r), x]];
                        Ok(vec![vec![Sym::n(r)]])
                    }
                    Some(max) => {
                        // X^min then a chain of (max - min) optional X's.
                        let mut tail: Option<Sym> = None;
                        for _ in min..(*max as usize) {
                            let k = self.nt_names.len();
                            let o = self.new_nt(format!("{}#{k}", owner.0), owner.clone());
                            let mut more = vec![x];
                            if let Some(t) = tail {
                                more.push(t);
                            }
                            self.bnf[o as usize] = vec![vec![], more];
                            tail = Some(Sym::n(o));
                        }
                        let mut seq = vec![x; min];
                        if let Some(t) = tail {
                            seq.push(t);
                        }
                        Ok(vec![seq])
                    }
                }
            }
            _ => Ok(vec![self.symbol(e, owner)?.into_iter().collect()]),
        }
    }
}
