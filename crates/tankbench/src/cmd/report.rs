//! `tankbench report` front end (being built; see the open issue).

pub fn report_main(_args: Vec<String>) -> anyhow::Result<i32> {
    anyhow::bail!("this command is not built yet")
}

pub fn compare_main(_args: Vec<String>) -> anyhow::Result<i32> {
    anyhow::bail!("this command is not built yet")
}

pub fn results_main(_args: Vec<String>) -> anyhow::Result<i32> {
    anyhow::bail!("this command is not built yet")
}

pub fn chart_main(_args: Vec<String>) -> anyhow::Result<i32> {
    anyhow::bail!("this command is not built yet")
}
