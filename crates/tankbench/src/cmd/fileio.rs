//! `tankbench fileio` (sysbench-compatible) and `tankbench quick`.

/// The sysbench-compatible front end; `args` are the words after the program name.
pub fn sysbench_main(args: Vec<String>) -> anyhow::Result<i32> {
    let invocation = fileio::cli::execute(&args);
    Ok(invocation.exit_code)
}

pub fn quick_main(_args: Vec<String>) -> anyhow::Result<i32> {
    anyhow::bail!("this command is not built yet")
}
