#![forbid(unsafe_code)]
use clap::Parser;

#[derive(Parser)]
enum Cli { Setup { #[arg(long)] no_book: bool } }

fn main() -> anyhow::Result<()> {
    match Cli::parse() {
        Cli::Setup { no_book } => { let t = checker::setup::ensure(&checker::setup::Options { book: !no_book, verbose: true })?; println!("{t:?}"); }
    }
    Ok(())
}
