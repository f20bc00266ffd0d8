//! tankbench: the binary. It only parses arguments, dispatches to the library
//! crates and prints; every benchmark, model, lab and report lives in a crate.

mod cmd;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let code = match cmd::dispatch(args) {
        Ok(code) => code,
        Err(err) => {
            // One line, naming what went wrong; the chain of causes follows on it.
            eprintln!("tankbench: {err:#}");
            1
        }
    };
    ExitCode::from(code.clamp(0, 255) as u8)
}
