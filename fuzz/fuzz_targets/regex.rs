//! libFuzzer entry point of the `regex` target; the body is [`corral_fuzz::regex::run`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| corral_fuzz::regex::run(data));
