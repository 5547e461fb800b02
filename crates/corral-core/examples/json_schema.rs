//! Compiles a JSON Schema file into a grammar from Rust alone, and reports how long it took.
//!
//! ```text
//! cargo run --release -p corral-core --example json_schema -- SCHEMA.json [TIMES]
//! ```
//!
//! The options are the specification's exact language with compact separators, as the
//! JSON benchmark uses; `TIMES` compiles (default 1) are timed one by one.

use corral_core::json_schema::compile::schema_grammar;
use corral_core::json_schema::translate::SchemaOptions;
use corral_core::Limits;

// The Python module's allocator, so that times match what Python users see.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: json_schema SCHEMA.json [TIMES]");
        std::process::exit(2);
    };
    let times: usize = args.next().and_then(|t| t.parse().ok()).unwrap_or(1);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    let options = SchemaOptions { spec_exact: true, integer_fraction: true, ..SchemaOptions::default() };
    let limits = Limits::default();
    for _ in 0..times {
        let t0 = std::time::Instant::now();
        match schema_grammar(&text, &[], &options, &limits) {
            Ok(built) => println!("{path}: {:?} ({} warnings)", t0.elapsed(), built.warnings.len()),
            Err(e) => println!("{path}: refused after {:?}: {e}", t0.elapsed()),
        }
    }
}
