//! libFuzzer entry point of the `matcher` target; the body is [`corral_fuzz::matcher::run`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| corral_fuzz::matcher::run(data));
