//! libFuzzer entry point of the `vocabulary` target; the body is [`corral_fuzz::vocabulary::run`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| corral_fuzz::vocabulary::run(data));
