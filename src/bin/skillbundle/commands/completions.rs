//! `skillbundle completions`: a shell completion script generated from the CLI's own
//! definition.

use crate::output;
use std::process::ExitCode;

/// Print a shell completion script.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle completions bash > /etc/bash_completion.d/skillbundle\n  skillbundle completions zsh > \"${fpath[1]}/_skillbundle\"\n  skillbundle completions fish > ~/.config/fish/completions/skillbundle.fish"
)]
pub struct Args {
    /// The shell to complete for.
    shell: clap_complete::Shell,
}

pub fn run(args: Args, mut cli: clap::Command) -> ExitCode {
    // clap_complete panics when its writer fails; it writes to memory, and the script
    // goes out through `output`, which reports a failed write.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, "skillbundle", &mut script);
    output::bytes(&script);
    ExitCode::SUCCESS
}
