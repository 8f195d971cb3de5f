//! `skillbundle man`: the man page, generated from the CLI's own help.

use crate::output;
use std::process::ExitCode;

/// Print the man page (roff) generated from this help.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  skillbundle man > skillbundle.1 && man ./skillbundle.1")]
pub struct Args {}

pub fn run(_args: Args, cli: clap::Command) -> ExitCode {
    let mut page = Vec::new();
    match clap_mangen::Man::new(cli).render(&mut page) {
        Ok(()) => {
            output::bytes(&page);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write the man page: {e}");
            ExitCode::from(2)
        }
    }
}
