//! tankbench: the binary. It only parses arguments, dispatches to the library
//! crates and prints; every benchmark, model, lab and report lives in a crate.

mod cmd;

use std::process::ExitCode;

fn main() -> ExitCode {
    // Die quietly on a closed pipe (`tankbench ... | head`), as C tools do,
    // instead of panicking on the failed write.
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
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
