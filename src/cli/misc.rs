//! `shootdown completions` and `shootdown man`.

use super::common::*;

#[derive(clap::Args)]
#[command(after_help = "\
Examples:
  shootdown completions bash > /etc/bash_completion.d/shootdown
  shootdown completions zsh > ~/.zfunc/_shootdown")]
pub struct CompletionsArgs {
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

pub fn completions(a: CompletionsArgs, io: &mut Io) -> Result<(), Fail> {
    let mut cmd = super::command();
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "shootdown", &mut buf);
    let _ = io.out.write_all(&buf);
    Ok(())
}

pub fn man(io: &mut Io) -> Result<(), Fail> {
    let mut out = Vec::new();
    clap_mangen::Man::new(super::command())
        .render(&mut out)
        .map_err(|e| {
            errln!(io, "error: {e}");
            Fail::Reported
        })?;
    let _ = io.out.write_all(&out);
    Ok(())
}
