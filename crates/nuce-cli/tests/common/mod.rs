//! Helpers shared by the integration tests of the `nuce` binary.

use std::process::Command;

/// Runs `nuce` with `args`: exit code, stdout, stderr.
pub fn nuce(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_nuce"))
        .args(args)
        .output()
        .expect("run nuce");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
