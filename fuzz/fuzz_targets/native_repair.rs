//! `repair_native`: see `src/repair.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| webmcp_host_fuzz::run(|| webmcp_host_fuzz::repair::native_repair(data)));
