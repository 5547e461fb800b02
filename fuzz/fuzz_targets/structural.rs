//! libFuzzer entry point of the `structural` target; the body is [`corral_fuzz::structural::run`].
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| corral_fuzz::structural::run(data));
