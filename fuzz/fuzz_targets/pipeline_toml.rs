#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| noisebench_fuzz_targets::pipeline_toml(data));
