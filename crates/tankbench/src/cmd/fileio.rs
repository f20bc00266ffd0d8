//! `tankbench fileio` (sysbench-compatible) and `tankbench quick`.

pub fn sysbench_main(_args: Vec<String>) -> anyhow::Result<i32> {
    anyhow::bail!("this command is not built yet")
}

pub fn quick_main(_args: Vec<String>) -> anyhow::Result<i32> {
    anyhow::bail!("this command is not built yet")
}
