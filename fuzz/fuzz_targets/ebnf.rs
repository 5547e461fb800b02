//! libFuzzer entry point of the `ebnf` target; the body is [`corral_fuzz::ebnf::run`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| corral_fuzz::ebnf::run(data));
