//! `nuce tasks`: not implemented yet (its issue fills it in).

/// Arguments of this subcommand.
#[derive(clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> nuce::Result<()> {
    Err(nuce::Error::InvalidInput(
        "'tasks' is not implemented yet".into(),
    ))
}
