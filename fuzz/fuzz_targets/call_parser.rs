//! The call parser and the step stream: see `src/call_parser.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    |data: &[u8]| webmcp_host_fuzz::run(|| webmcp_host_fuzz::call_parser::call_parser(data))
);
