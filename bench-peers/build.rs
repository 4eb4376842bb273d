//! Compiles the C++ shim that calls the reference library's `Encode(text, &ids)` (see
//! cpp/spm_ids.cc); the library itself is built and linked by sentencepiece-sys.

fn main() {
    println!("cargo:rerun-if-changed=cpp/spm_ids.cc");
    println!("cargo:rerun-if-changed=cpp/sentencepiece_processor.h");
    cc::Build::new()
        .cpp(true)
        .file("cpp/spm_ids.cc")
        .include("cpp")
        .flag("-std=c++17")
        .opt_level(3)
        .compile("bench_peers_spm_ids");
}
