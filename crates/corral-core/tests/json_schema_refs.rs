//! Every `$ref` of the official JSON-Schema-Test-Suite (drafts 4, 7 and 2020-12, with
//! `optional/`) resolves, with the suite's remote documents supplied the way a caller's
//! resolver would supply them: the documents [`Resources::missing_documents`] names are
//! looked up in `remotes/` and added until none is missing.
//!
//! The suite lives in `../shared/data/json-schema-test-suite/` beside the repository.

use std::fs;
use std::path::{Path, PathBuf};

use corral_core::error::{Error, SchemaErrorKind};
use corral_core::json_schema::resources::{children, Draft, Resources, Subschema};
use serde_json::Value;

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/json-schema-test-suite")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir).expect("suite folder").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

/// The remote document at `uri`, if the suite has it.
fn remote(uri: &str) -> Option<Value> {
    let path = uri.strip_prefix("http://localhost:1234/")?;
    let text = fs::read_to_string(suite().join("remotes").join(path)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Resolves every `$ref` reachable from `root` (each subschema once). Returns how many
/// were resolved, or the first failure.
fn resolve_all<'a>(r: &Resources<'a>, root: Subschema<'a>) -> Result<usize, String> {
    let mut stack = vec![root];
    let mut seen: Vec<(*const Value, std::rc::Rc<str>)> = Vec::new();
    let mut resolved = 0;
    while let Some(sub) = stack.pop() {
        let key = (sub.node as *const Value, sub.base.clone());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if let Some(reference) = sub.node.get("$ref") {
            match r.resolve(&sub, reference) {
                Ok(target) => {
                    resolved += 1;
                    stack.push(target); // resolved targets come entered
                }
                // The metaschemas are not in the suite's remotes: such a reference must
                // fail, naming the document.
                Err(e)
                    if reference
                        .as_str()
                        .is_some_and(|u| u.split_once("://").is_some_and(|(_, r)| r.starts_with("json-schema.org/"))) =>
                {
                    let doc = reference.as_str().unwrap_or_default().trim_end_matches('#');
                    if !e.to_string().contains(doc) {
                        return Err(format!("{}: {e} does not name {doc}", sub.pointer));
                    }
                }
                Err(e) => return Err(format!("{}: {e}", sub.pointer)),
            }
        }
        for (child, tokens) in children(sub.node) {
            let pointer = format!("{}/{}", sub.pointer, tokens.join("/"));
            stack.push(r.enter(&Subschema { node: child, pointer, base: sub.base.clone(), draft: sub.draft }));
        }
    }
    Ok(resolved)
}

fn check_draft(folder: &str, draft: Draft) -> (usize, Vec<String>) {
    let mut paths = Vec::new();
    files(&suite().join("tests").join(folder), &mut paths);
    assert!(!paths.is_empty(), "no suite files in {folder}");
    let (mut resolved, mut failures) = (0, Vec::new());
    for path in paths {
        let cases: Value = serde_json::from_str(&fs::read_to_string(&path).expect("read")).expect("suite JSON");
        for case in cases.as_array().expect("a list of cases") {
            let name = format!("{}: {}", path.display(), case["description"]);
            let schema = &case["schema"];
            let supplied: Vec<(String, Value)> = supply(schema, draft);
            let (mut r, root) = match Resources::new(schema, draft, 1_000) {
                Ok(x) => x,
                // Custom metaschemas (their vocabularies unknown) are refused as unsupported.
                Err(Error::Schema { kind: SchemaErrorKind::Unsupported, pointer, .. }) if pointer == "/$schema" => continue,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    continue;
                }
            };
            for (uri, doc) in &supplied {
                r.add_document(uri, doc, draft, 1_000).expect("a suite remote indexes");
            }
            match resolve_all(&r, root) {
                Ok(n) => resolved += n,
                Err(e) => failures.push(format!("{name}: {e}")),
            }
        }
    }
    (resolved, failures)
}

/// The remote documents `schema` needs, found by asking for missing documents until the
/// answer no longer changes (as a resolver loop does).
fn supply(schema: &Value, draft: Draft) -> Vec<(String, Value)> {
    let mut docs: Vec<(String, Value)> = Vec::new();
    loop {
        let Ok((mut r, _)) = Resources::new(schema, draft, 1_000) else { return docs };
        for (uri, doc) in &docs {
            let _ = r.add_document(uri, doc, draft, 1_000);
        }
        let new: Vec<(String, Value)> = r
            .missing_documents()
            .into_iter()
            .filter(|u| !docs.iter().any(|(d, _)| d == u))
            .filter_map(|u| remote(&u).map(|d| (u, d)))
            .collect();
        if new.is_empty() {
            return docs;
        }
        docs.extend(new);
    }
}

#[test]
fn every_ref_of_the_suite_resolves() {
    let mut total = 0;
    for (folder, draft) in [("draft4", Draft::Draft4), ("draft7", Draft::Draft7), ("draft2020-12", Draft::Draft2020)] {
        let (resolved, failures) = check_draft(folder, draft);
        assert!(failures.is_empty(), "{folder}: {} failures:\n{}", failures.len(), failures.join("\n"));
        eprintln!("{folder}: {resolved} references resolved");
        assert!(resolved > 30, "{folder}: only {resolved} references resolved");
        total += resolved;
    }
    assert!(total > 150, "{total}");
}
