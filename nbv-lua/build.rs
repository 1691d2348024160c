//! Builds the Lua 5.1 of `lua/lua-5.1.5` (gopher-lua's `goto` and labels, and a hook
//! for number formatting; see `lua/README.md`) as the static library mlua links against. mlua-sys is built with `external`, so this is the only
//! Lua in the program.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    build_lua();
}

fn build_lua() {
    use std::path::Path;

    let source = Path::new("lua/lua-5.1.5");
    println!("cargo:rerun-if-changed={}", source.display());
    let target = std::env::var("TARGET").unwrap_or_default();
    let mut build = cc::Build::new();
    if target.contains("linux") || target.contains("bsd") || target.contains("apple") {
        // As the lua-src crate does for 5.1: POSIX features (popen, mkstemp, dlopen).
        build.define("LUA_USE_LINUX", None);
    } else if !target.contains("windows") {
        build.define("LUA_USE_POSIX", None);
    }
    let mut files: Vec<_> = std::fs::read_dir(source)
        .expect("nbv-lua/lua/lua-5.1.5 is part of the crate")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "c"))
        .collect();
    files.sort();
    build
        .include(source)
        .files(files)
        .warnings(false)
        .flag_if_supported("-fno-common")
        .compile("nbv_lua51");
    // `LUA_USE_LINUX` brings dlopen (package.loadlib, removed by the sandbox) and the
    // maths library. glibc has them in libdl and libm; musl has them in its libc.a, and
    // asking for them there would link the build machine's glibc libm.so into nbv's
    // static binary (the image's build, docs/install.md), which then fails to start.
    let musl = std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|env| env == "musl");
    if target.contains("linux") && !musl {
        println!("cargo:rustc-link-lib=dylib=dl");
        println!("cargo:rustc-link-lib=dylib=m");
    }
}
