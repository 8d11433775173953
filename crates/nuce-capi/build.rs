//! The shared library is installed as `libnuce.so` (scripts/install.sh): give
//! it that SONAME, so that applications record `libnuce.so` as their dependency.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libnuce.so");
    }
}
