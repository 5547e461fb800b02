//! libFuzzer entry point of the `lark` target; the body is [`corral_fuzz::lark::run`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| corral_fuzz::lark::run(data));
