#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| noisebench_fuzz_targets::edgar_json(data));
