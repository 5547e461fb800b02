//! Grammars built directly as an AST (as the JSON Schema translator builds them), with
//! regular pieces given as HIRs rather than text: alone, merged with text pieces, inside
//! recursion, under `and!`/`not!`, and a piece that matches nothing.

use std::sync::Arc;

use corral_core::frontend::ast::{DfaTerm, Expr, GrammarAst, HirTerm, Pos, RuleDef, Term};
use corral_core::frontend::regex::compile_hir;
use corral_core::{CompiledGrammar, Grammar, Limits, LowerOptions};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, Repetition};

#[path = "support/bytes.rs"]
mod bytes;
use bytes::{accepts, byte_vocab};

fn at() -> Pos {
    Pos { line: 1, col: 1 }
}

fn hir(h: Hir) -> Expr {
    Expr::Term { term: Term::Hir(HirTerm::new(h)), pos: at() }
}

fn lit(s: &str) -> Expr {
    Expr::Term { term: Term::Literal(s.to_string()), pos: at() }
}

fn re(s: &str) -> Expr {
    Expr::Term { term: Term::Regex(s.to_string()), pos: at() }
}

fn rule(name: &str, expr: Expr) -> RuleDef {
    RuleDef { name: name.to_string(), expr, pos: at(), is_terminal: false }
}

fn r(name: &str) -> Expr {
    Expr::Ref { name: name.to_string(), pos: at() }
}

/// `[lo-hi]+` as a HIR.
fn class_plus(lo: char, hi: char) -> Hir {
    let class = Hir::class(Class::Unicode(ClassUnicode::new([ClassUnicodeRange::new(lo, hi)])));
    Hir::repetition(Repetition { min: 1, max: None, greedy: true, sub: Box::new(class) })
}

fn compile(rules: Vec<RuleDef>) -> corral_core::Result<Arc<CompiledGrammar>> {
    compile_with(rules, &LowerOptions::default())
}

fn compile_with(rules: Vec<RuleDef>, options: &LowerOptions) -> corral_core::Result<Arc<CompiledGrammar>> {
    let ast = GrammarAst { rules, ..Default::default() };
    let g = Grammar::cfg_ast(&ast, "test grammar", Some("start"), &Limits::default(), options, None)?;
    Ok(Arc::new(CompiledGrammar::new(&g, byte_vocab(), &Limits::default(), false)?))
}

fn check(rules: Vec<RuleDef>, pass: &[&str], fail: &[&str]) {
    check_with(rules, &LowerOptions::default(), pass, fail)
}

fn check_with(rules: Vec<RuleDef>, options: &LowerOptions, pass: &[&str], fail: &[&str]) {
    let c = compile_with(rules, options).expect("compiles");
    for s in pass {
        assert!(accepts(&c, s, "ast"), "{s:?} must match");
    }
    for s in fail {
        assert!(!accepts(&c, s, "ast"), "{s:?} must not match");
    }
}

#[test]
fn a_hir_piece_alone_and_beside_text_pieces() {
    let start = Expr::Seq(vec![lit("<"), hir(class_plus('a', 'c')), re("[0-9]?"), lit(">")]);
    check(vec![rule("start", start)], &["<a>", "<abc7>", "<cc>"], &["<>", "<d>", "<a77>", "abc"]);
}

#[test]
fn hir_pieces_inside_recursion_and_unicode() {
    // start ::= "(" start ")" | greek+
    let start = Expr::Alt(vec![Expr::Seq(vec![lit("("), r("start"), lit(")")]), hir(class_plus('α', 'ω'))]);
    check(vec![rule("start", start)], &["αβ", "((ω))"], &["(α", "a", "()"]);
}

#[test]
fn hir_pieces_under_boolean_operators() {
    // and!([a-c]+, not!("ab")): any string of a-c but "ab".
    let start =
        Expr::And { exprs: vec![hir(class_plus('a', 'c')), Expr::Not { expr: Box::new(lit("ab")), pos: at() }], pos: at() };
    check(vec![rule("start", start)], &["a", "abc", "ba"], &["ab", "", "d"]);
}

#[test]
fn a_hir_piece_that_matches_nothing_drops_its_alternative() {
    let start = Expr::Alt(vec![hir(Hir::fail()), lit("x")]);
    check(vec![rule("start", start)], &["x"], &[""]);
    let err = compile(vec![rule("start", hir(Hir::fail()))]).expect_err("a grammar of nothing is an error");
    assert!(err.to_string().contains("matches no string"), "{err}");
}

#[test]
fn a_built_dfa_piece_beside_others() {
    let dfa = compile_hir(&class_plus('x', 'z'), "xyz", &Limits::default()).expect("builds");
    let piece = Expr::Term { term: Term::Dfa(DfaTerm::new(Arc::new(dfa), "xyz+".into())), pos: at() };
    let start = Expr::Seq(vec![lit("a"), piece.clone(), Expr::Repeat { expr: Box::new(piece), min: 0, max: Some(1), pos: at() }]);
    check(vec![rule("start", start)], &["ax", "axyzz", "axy"], &["a", "ab", "xa"]);
}

/// `start ::= "[" item ("," item)* "]"`, `item ::= key ":" value`, with `value` a HIR
/// rule and `key` a text one (a recursive `start` keeps it a context-free grammar).
fn mixed_rules() -> Vec<RuleDef> {
    let items = Expr::Repeat { expr: Box::new(Expr::Seq(vec![lit(","), r("item")])), min: 0, max: None, pos: at() };
    let nested = Expr::Seq(vec![lit("("), r("start"), lit(")")]);
    vec![
        rule("start", Expr::Alt(vec![Expr::Seq(vec![lit("["), r("item"), items, lit("]")]), nested])),
        rule("item", Expr::Seq(vec![r("key"), lit(":"), r("value")])),
        rule("key", re("[a-z]+")),
        rule("value", Expr::Alt(vec![hir(class_plus('0', '9')), lit("-")])),
    ]
}

#[test]
fn hir_and_text_pieces_make_one_terminal_or_merge() {
    let pass = ["[a:1]", "[ab:12,c:-]", "([x:0])"];
    let fail = ["[a:]", "[:1]", "[a:1,]", "[A:1]", "[a:-1]"];
    // One terminal of both kinds of pieces (`item` is light), then merged with "[" and "]".
    check(mixed_rules(), &pass, &fail);
    // No piece determinized with another: the terminals of `key`, ":" and `value` are
    // joined by concatenation instead.
    check_with(mixed_rules(), &LowerOptions { max_terminal_source: 0 }, &pass, &fail);
}

#[test]
fn except_over_hir_and_mixed_pieces() {
    // except!("a" [0-9]+): strings with no "a" followed by a digit.
    let piece = Expr::Seq(vec![lit("a"), hir(class_plus('0', '9'))]);
    let start = Expr::Except { expr: Box::new(piece), pos: at() };
    check(vec![rule("start", start)], &["", "a", "ba", "9a", "aa", "a b1"], &["a1", "xa12y", "aa0"]);
    // except!([a-c]+): only strings without a, b or c.
    let start = Expr::Except { expr: Box::new(hir(class_plus('a', 'c'))), pos: at() };
    check(vec![rule("start", start)], &["", "xyz", "é"], &["a", "xbx"]);
}
