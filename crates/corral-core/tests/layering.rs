//! The core's modules form layers (see the crate docs): a top-level module may use only
//! modules of its own layer or of layers below it, and no module may reach, through
//! `crate::` or `super::` paths, a module that reaches it back. This test reads the
//! sources (comments and test modules left out), builds the graph of module references,
//! and fails on a reference up the layers or on any cycle, naming the modules.

/// The layers, bottom first: each top-level module of `src/` must be in one of them.
const LAYERS: &[&[&str]] = &[
    &["error", "limits", "util"],
    &["automata"],
    &["vocab"],
    &["frontend"],
    &["grammar"],
    &["json_schema"],
    &["structural"],
    &["parser"],
    &["index"],
    &["matcher"],
];

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// Module path (`cfg::earley`) → its source file's text, without comments and tests.
fn modules(dir: &Path, prefix: &[String], out: &mut BTreeMap<String, String>) {
    let mut entries: Vec<_> = fs::read_dir(dir).expect("source dir").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for path in entries {
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if path.is_dir() {
            let mut p = prefix.to_vec();
            p.push(stem);
            modules(&path, &p, out);
            continue;
        }
        if path.extension().and_then(|e| e.to_str()) != Some("rs") || stem.ends_with("_tests") || stem == "tests" {
            continue;
        }
        let mut parts = prefix.to_vec();
        if stem != "mod" && stem != "lib" {
            parts.push(stem);
        }
        let text = fs::read_to_string(&path).expect("source file");
        out.insert(parts.join("::"), code_of(&text));
    }
}

/// The text without line comments and without a trailing `#[cfg(test)] mod tests`.
fn code_of(text: &str) -> String {
    let body = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    body.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// The modules `name`'s code refers to (`crate::a::b::Item` → the longest module prefix;
/// `super::` climbs from `name`'s parent, once per repeat).
fn references(name: &str, code: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let here: Vec<&str> = if name.is_empty() { Vec::new() } else { name.split("::").collect() };
    let mut out = BTreeSet::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let at_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_' || bytes[i - 1] == b':');
        let rest = &code[i..];
        let (mut base, mut tail) = if at_word && rest.starts_with("crate::") {
            (Vec::new(), &rest[7..])
        } else if at_word && rest.starts_with("super::") {
            (here[..here.len().saturating_sub(1)].to_vec(), &rest[7..])
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        while let Some(t) = tail.strip_prefix("super::") {
            base.pop();
            tail = t;
        }
        let path = tail.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).next().unwrap_or("");
        base.extend(path.split("::").filter(|s| !s.is_empty()));
        for k in (1..=base.len()).rev() {
            let cand = base[..k].join("::");
            if known.contains(&cand) {
                if cand != name && !name.starts_with(&format!("{cand}::")) {
                    out.insert(cand);
                }
                break;
            }
        }
        i = code.len() - tail.len();
    }
    out
}

/// A cycle in `graph`, if any (depth-first search with colours).
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut colour: BTreeMap<&str, u8> = BTreeMap::new();
    for start in graph.keys() {
        if colour.contains_key(start.as_str()) {
            continue;
        }
        let mut stack: Vec<(&str, Vec<&str>)> = vec![(start, graph[start].iter().map(String::as_str).collect())];
        colour.insert(start, 1);
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            match next.pop() {
                Some(m) => match colour.get(m) {
                    Some(1) => {
                        let at = stack.iter().position(|(n, _)| *n == m).unwrap_or(0);
                        return Some(stack[at..].iter().map(|(n, _)| n.to_string()).chain([m.to_string()]).collect());
                    }
                    Some(_) => {}
                    None => {
                        colour.insert(m, 1);
                        let succ = graph.get(m).map(|s| s.iter().map(String::as_str).collect()).unwrap_or_default();
                        stack.push((m, succ));
                    }
                },
                None => {
                    colour.insert(node, 2);
                    stack.pop();
                }
            }
        }
    }
    None
}

#[test]
fn no_module_of_the_core_reaches_itself() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut mods = BTreeMap::new();
    modules(&src, &[], &mut mods);
    let known: BTreeSet<String> = mods.keys().cloned().collect();
    let graph: BTreeMap<String, BTreeSet<String>> =
        mods.iter().map(|(name, code)| (name.clone(), references(name, code, &known))).collect();
    assert!(graph.len() > 20, "the source tree was not read: {:?}", graph.keys());
    if let Some(cycle) = find_cycle(&graph) {
        panic!("modules that reach each other: {}", cycle.join(" -> "));
    }
}

/// The layer of module `name` (by its top-level module; the crate root is above all).
fn layer(name: &str) -> Option<usize> {
    let top = name.split("::").next().unwrap_or("");
    if top.is_empty() {
        return Some(LAYERS.len());
    }
    LAYERS.iter().position(|l| l.contains(&top))
}

/// Every reference that goes up the layers, as "from -> to".
fn upward(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for (from, refs) in graph {
        for to in refs {
            if layer(to) > layer(from) {
                out.push(format!("{from} -> {to}"));
            }
        }
    }
    out
}

#[test]
fn every_module_uses_only_its_layer_and_those_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut mods = BTreeMap::new();
    modules(&src, &[], &mut mods);
    let unplaced: Vec<&String> = mods.keys().filter(|m| layer(m).is_none()).collect();
    assert!(unplaced.is_empty(), "modules in no layer (add them to LAYERS): {unplaced:?}");
    let known: BTreeSet<String> = mods.keys().cloned().collect();
    let graph: BTreeMap<String, BTreeSet<String>> =
        mods.iter().map(|(name, code)| (name.clone(), references(name, code, &known))).collect();
    let up = upward(&graph);
    assert!(up.is_empty(), "references up the layers: {up:?}");
}

#[test]
fn the_check_finds_a_reference_up_the_layers() {
    let known: BTreeSet<String> = ["automata", "parser::earley", "parser"].iter().map(|s| s.to_string()).collect();
    let graph = BTreeMap::from([
        ("automata".to_string(), references("automata", "use crate::parser::earley::Chart;", &known)),
        ("parser::earley".to_string(), references("parser::earley", "use crate::automata::Dfa;", &known)),
    ]);
    assert_eq!(upward(&graph), vec!["automata -> parser::earley".to_string()]);
    assert_eq!(layer("frontend::regex::build"), Some(3));
    assert_eq!(layer("nowhere"), None);
}

#[test]
fn the_check_finds_a_cycle() {
    // The checker itself, on a made-up pair of modules that refer to each other.
    let known: BTreeSet<String> = ["a", "b", "b::c"].iter().map(|s| s.to_string()).collect();
    let a = references("a", "use crate::b::c::Thing;", &known);
    let c = references("b::c", &code_of("fn f() { super::super::a::g() } // crate::b"), &known);
    assert_eq!(a, BTreeSet::from(["b::c".to_string()]));
    assert_eq!(c, BTreeSet::from(["a".to_string()]));
    let graph = BTreeMap::from([("a".to_string(), a), ("b::c".to_string(), c), ("b".to_string(), BTreeSet::new())]);
    assert!(find_cycle(&graph).is_some());
}
