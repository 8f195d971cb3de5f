//! `skillbundle man`: man pages generated from the CLI's own help, one for the command
//! and one per subcommand, with the examples kept line for line.

use crate::output;
use std::process::ExitCode;

/// Print a man page (roff) generated from this help: skillbundle(1), or one subcommand's.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  skillbundle man > skillbundle.1 && man ./skillbundle.1\n  skillbundle man build > skillbundle-build.1\n  for c in $(skillbundle man --list); do skillbundle man $c > skillbundle-$c.1; done"
)]
pub struct Args {
    /// The subcommand to document (the page skillbundle(1) lists as skillbundle-COMMAND(1)).
    #[arg(value_name = "COMMAND")]
    command: Option<String>,
    /// Print the names of the subcommands that have a page, one per line.
    #[arg(long, conflicts_with = "command")]
    list: bool,
}

pub fn run(args: Args, cli: clap::Command) -> ExitCode {
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    if args.list {
        let names: Vec<String> = cli
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(|s| s.get_name().to_string())
            .collect();
        output::lines(&names);
        return ExitCode::SUCCESS;
    }
    let cmd = match &args.command {
        None => cli,
        Some(name) => match cli.find_subcommand(name) {
            Some(sub) => sub.clone(),
            None => {
                let e = clap::Error::raw(
                    clap::error::ErrorKind::InvalidSubcommand,
                    "no such command; `skillbundle man --list` names the pages there are\n",
                )
                .with_cmd(&cli);
                let _ = e.print();
                return ExitCode::from(2);
            }
        },
    };
    match page(cmd) {
        Ok(page) => {
            output::bytes(&page);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot render the man page: {e}");
            ExitCode::from(2)
        }
    }
}

/// clap_mangen's page, except that in the text after the options the examples are set
/// without filling, so that each stays on its own line as in `--help`.
fn page(cmd: clap::Command) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd.clone())
        .source(format!("skillbundle {}", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }
    if let Some(text) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) {
        // Indented lines (examples) are set as they are; prose is filled as usual.
        let mut roff = roff::Roff::new();
        roff.control("SH", ["EXTRA"]);
        let mut verbatim = false;
        for line in text.to_string().lines() {
            let indented = line.starts_with(' ');
            if indented != verbatim {
                roff.control(if indented { "nf" } else { "fi" }, []);
                verbatim = indented;
            }
            roff.text([roff::roman(line)]);
        }
        if verbatim {
            roff.control("fi", []);
        }
        roff.to_writer(&mut out)?;
    }
    if cmd.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(out)
}
