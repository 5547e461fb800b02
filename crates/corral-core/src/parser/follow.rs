//! The bytes that may come right after each terminal: the first bytes of every terminal
//! that can follow it in some derivation (FOLLOW sets over bytes).
//!
//! A lexer mask records the trie nodes where its terminal may end, and the parser goes on
//! below them. Below a node whose children all start with bytes that nothing after the
//! terminal can start with, the parser would find nothing: such ends need no recording.
//! A terminal that may end at every byte (free text before its closing marker) then ends
//! only where a marker's first byte follows, which a string-safe slice can serve
//! (see `crate::automata::string_safe`).

use crate::grammar::lower::Cfg;

/// A set of bytes, one bit each.
pub(crate) type ByteSet = [u64; 4];

fn union_into(into: &mut ByteSet, from: &ByteSet) -> bool {
    let mut changed = false;
    for (a, b) in into.iter_mut().zip(from) {
        changed |= *b & !*a != 0;
        *a |= b;
    }
    changed
}

/// Per terminal: the bytes that can start what follows it (empty where nothing can).
/// `first` holds each terminal's first bytes. Productions have no empty right-hand side
/// but `start → ε` (and the start is in none), so a symbol's first bytes are those of its
/// productions' first symbols, and what follows a production's last symbol is what
/// follows its left-hand side. Both are spread along their edges from a work list: each
/// set only grows, so each node is revisited at most once per byte it gains.
pub(crate) fn follow_bytes(cfg: &Cfg, first: &[ByteSet]) -> Vec<ByteSet> {
    let nts = cfg.nonterminals.len();
    // FIRST of the nonterminals: A gets FIRST(B) for every production A → B ….
    let mut nt_first = vec![[0u64; 4]; nts];
    let mut starts_of: Vec<Vec<u32>> = vec![Vec::new(); nts]; // B → the A whose productions start with B
    for p in &cfg.productions {
        let Some(&s) = p.rhs.first() else { continue };
        if s.is_terminal() {
            union_into(&mut nt_first[p.lhs as usize], &first[s.index() as usize]);
        } else {
            starts_of[s.index() as usize].push(p.lhs);
        }
    }
    spread(&mut nt_first, &starts_of);
    let first_of = |s: crate::grammar::Sym| -> &ByteSet {
        if s.is_terminal() {
            &first[s.index() as usize]
        } else {
            &nt_first[s.index() as usize]
        }
    };
    // FOLLOW: a symbol gets the first bytes of the symbol after it, and a production's
    // last symbol everything its left-hand side's FOLLOW holds.
    let mut nt_follow = vec![[0u64; 4]; nts];
    let mut t_follow = vec![[0u64; 4]; cfg.terminals.len()];
    let mut last_of: Vec<Vec<u32>> = vec![Vec::new(); nts]; // A → the nonterminals that end A's productions
    let mut last_terminals: Vec<Vec<u32>> = vec![Vec::new(); nts];
    for p in &cfg.productions {
        for pair in p.rhs.windows(2) {
            let next = *first_of(pair[1]);
            match pair[0].is_terminal() {
                true => union_into(&mut t_follow[pair[0].index() as usize], &next),
                false => union_into(&mut nt_follow[pair[0].index() as usize], &next),
            };
        }
        match p.rhs.last() {
            Some(&s) if s.is_terminal() => last_terminals[p.lhs as usize].push(s.index()),
            Some(&s) => last_of[p.lhs as usize].push(s.index()),
            None => {}
        }
    }
    spread(&mut nt_follow, &last_of);
    for (a, terms) in last_terminals.iter().enumerate() {
        for &t in terms {
            union_into(&mut t_follow[t as usize], &nt_follow[a]);
        }
    }
    t_follow
}

/// Spreads `sets` along `into[b]` (the nodes that take node b's set) until nothing grows.
fn spread(sets: &mut [ByteSet], into: &[Vec<u32>]) {
    let mut queued = vec![true; sets.len()];
    let mut work: Vec<u32> = (0..sets.len() as u32).collect();
    while let Some(b) = work.pop() {
        queued[b as usize] = false;
        let from = sets[b as usize];
        for &a in &into[b as usize] {
            if union_into(&mut sets[a as usize], &from) && !std::mem::replace(&mut queued[a as usize], true) {
                work.push(a);
            }
        }
    }
}
