//! Command-line helpers of the examples.

/// The value after `--name` in `args`, or `default`.
pub fn option(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| default.to_string())
}
