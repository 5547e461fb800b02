//! libFuzzer entry point of the `gbnf` target; the body is [`corral_fuzz::gbnf::run`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| corral_fuzz::gbnf::run(data));
