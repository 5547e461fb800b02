//! Context-free grammars: syntaxes (EBNF, GBNF, Lark) → one AST → a normalized BNF over
//! byte-DFA terminals → an Earley recognizer read byte by byte.

pub mod ast;
pub(crate) mod complete;
pub mod earley;
pub mod lark;
pub(crate) mod lexmask;
pub mod lower;
pub mod parse;
pub mod sample;

pub use earley::{advance_chart, Chart, EarleyGrammar, Overlay};
pub use lower::{lower, Cfg};
pub use parse::{parse, Dialect};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::limits::Limits;

    fn grammar(text: &str) -> EarleyGrammar {
        let limits = Limits::default();
        let ast = parse(text, Dialect::Ebnf, &limits).unwrap();
        EarleyGrammar::new(lower(&ast, None, &limits, None).unwrap(), &limits)
    }

    fn accepts(g: &EarleyGrammar, input: &str) -> bool {
        let mut chart = g.start_chart().unwrap();
        advance_chart(g, &mut chart, input.as_bytes()).unwrap() && chart.is_accepting()
    }

    fn err(text: &str) -> Error {
        let limits = Limits::default();
        match parse(text, Dialect::Ebnf, &limits) {
            Err(e) => e,
            Ok(ast) => lower(&ast, None, &limits, None).unwrap_err(),
        }
    }

    #[test]
    fn arithmetic_left_recursive() {
        let g = grammar(
            r#"expr ::= expr "+" term | term ;
               term ::= term "*" factor | factor ;
               factor ::= "(" expr ")" | [0-9]+ ;"#,
        );
        for s in ["1", "1+2*3", "(1+2)*3", "((7))", "12*(3+45)+6"] {
            assert!(accepts(&g, s), "{s}");
        }
        for s in ["", "1+", "()", "(1", "1)", "+1", "1 + 2"] {
            assert!(!accepts(&g, s), "{s}");
        }
    }

    #[test]
    fn balanced_with_empty() {
        let g = grammar(r#"s ::= "(" s ")" s | "" ;"#);
        for s in ["", "()", "(())()", "((()))"] {
            assert!(accepts(&g, s), "{s}");
        }
        for s in ["(", ")(", "(()"] {
            assert!(!accepts(&g, s), "{s}");
        }
    }

    #[test]
    fn right_recursion_is_linear() {
        let g = grammar(r#"a ::= "a" a | "b" ;"#);
        let long = "a".repeat(20_000) + "b";
        let mut chart = g.start_chart().unwrap();
        assert!(advance_chart(&g, &mut chart, long.as_bytes()).unwrap());
        assert!(chart.is_accepting());
        // Leo keeps each set small: items per set do not grow with the input.
        assert!(chart.num_items() < 10 * long.len(), "{} items", chart.num_items());
    }

    #[test]
    fn ambiguous_grammar() {
        let g = grammar(r#"e ::= e e | "x" | "(" e ")" ;"#);
        assert!(accepts(&g, "xxxx"));
        assert!(accepts(&g, "x(xx)x"));
        assert!(!accepts(&g, "x()"));
    }

    #[test]
    fn no_greedy_lexing() {
        // `x` is recursive (not one terminal), so `[a]+` and "ab" are lexed separately:
        // "aab" needs the `[a]+` terminal to stop after one byte.
        let g = grammar(r#"s ::= x "ab" ; x ::= [a]+ | "(" s ")" ;"#);
        assert!(accepts(&g, "aab"));
        assert!(accepts(&g, "aaaab"));
        assert!(accepts(&g, "(aab)ab"));
        assert!(!accepts(&g, "ab"));
    }

    #[test]
    fn except_terminal() {
        let g = grammar(r#"c ::= "/*" except!("*/") "*/" ;"#);
        for s in ["/**/", "/* hi */", "/* * / */", "/* é */"] {
            assert!(accepts(&g, s), "{s}");
        }
        for s in ["/* a */ b */", "/*", "/* */ */"] {
            assert!(!accepts(&g, s), "{s}");
        }
    }

    #[test]
    fn repetitions_and_groups() {
        let g = grammar(r#"s ::= ("a" | "b" s){2,3} "c"? ;"#);
        for s in ["aa", "aaa", "aac", "babaa", "ab" ] {
            let want = match s {
                "aa" | "aaa" | "aac" => true,
                _ => false,
            };
            assert_eq!(accepts(&g, s), want, "{s}");
        }
        let g = grammar(r#"list ::= item ("," item)* ; item ::= "x" | "[" list? "]" ;"#);
        for s in ["x", "x,x", "[]", "[x,[x,x]],x"] {
            assert!(accepts(&g, s), "{s}");
        }
        assert!(!accepts(&g, "x,"));
    }

    #[test]
    fn errors_name_line_and_column() {
        match err("s ::= a ;\n  t ::= \"x\" ;") {
            Error::Grammar { message, line, col } => {
                assert!(message.contains("undefined rule `a`"), "{message}");
                assert_eq!((line, col), (1, 7));
            }
            e => panic!("{e:?}"),
        }
        match err("s ::= \"a\" loop ;\nloop ::= \"b\" loop ;") {
            Error::Grammar { message, line, .. } => {
                assert!(message.contains("can never produce a finite string"), "{message}");
                assert!(message.contains("loop") || message.contains("start"), "{message}");
                assert!(line >= 1);
            }
            e => panic!("{e:?}"),
        }
        match err("s ::= \"a\" (") {
            Error::Grammar { line, col, .. } => assert_eq!((line, col), (1, 12)),
            e => panic!("{e:?}"),
        }
        match err("s ::= [^\\s\\S] ;") {
            Error::Grammar { message, .. } => assert!(message.contains("matches no string"), "{message}"),
            e => panic!("{e:?}"),
        }
    }

    #[test]
    fn unused_rules_are_warnings() {
        let limits = Limits::default();
        let ast = parse("s ::= \"a\" ;\nunused ::= \"b\" ;", Dialect::Ebnf, &limits).unwrap();
        let cfg = lower(&ast, None, &limits, None).unwrap();
        assert_eq!(cfg.warnings.len(), 1);
        assert!(cfg.warnings[0].contains("`unused` at line 2, column 1"), "{:?}", cfg.warnings);
    }
}
