//! `tankbench plan` front end (being built; see the open issue).

pub fn plan_main(_args: Vec<String>) -> anyhow::Result<i32> {
    anyhow::bail!("this command is not built yet")
}

pub fn simulate_main(_args: Vec<String>) -> anyhow::Result<i32> {
    anyhow::bail!("this command is not built yet")
}
