//! Runs one fuzz target on input files, on the stable toolchain, with the time each took:
//! `cargo run --release --manifest-path fuzz/Cargo.toml --example replay -- <target> <file>...`
//! (to look at a crash file from `cargo fuzz run` without nightly, or to find slow inputs).

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let target = args.next().expect("usage: replay <target> <file>...");
    for path in args {
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let start = Instant::now();
        corral_fuzz::run_target(&target, &data);
        println!("{:>9.1} ms  {path}", start.elapsed().as_secs_f64() * 1e3);
    }
}
