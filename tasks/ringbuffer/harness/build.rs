//! Compiles shim.c (the real ck_ring SPSC functions from Debian's libck-dev header) into a static
//! library with the system C compiler. No `cc` crate: the harness builds from Debian's packages
//! and needs nothing from a crate registry.
use std::path::PathBuf;
use std::process::Command;

fn run(cmd: &mut Command, what: &str) {
    let status = cmd.status().unwrap_or_else(|e| panic!("{}: cannot start: {}", what, e));
    assert!(status.success(), "{} failed ({}); is libck-dev installed (apt-get install -y libck-dev)?", what, status);
}

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let obj = out.join("shim.o");
    let lib = out.join("libckshim.a");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    run(Command::new(&cc).args(["-O2", "-fPIC", "-Wall", "-Werror", "-c", "shim.c", "-o"]).arg(&obj), "compiling shim.c");
    run(Command::new("ar").arg("crs").arg(&lib).arg(&obj), "archiving shim.o");
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=ckshim");
    println!("cargo:rerun-if-changed=shim.c");
    println!("cargo:rerun-if-changed=/usr/include/ck_ring.h");
}
