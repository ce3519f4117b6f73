//! What a page sends the worker (bridge replies, runtime messages): see `src/page.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| webmcp_host_fuzz::run(|| webmcp_host_fuzz::page::page_message(data)));
