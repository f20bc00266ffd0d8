//! `tankbench lab` front end (being built; see the open issue).

pub fn lab_main(_args: Vec<String>) -> anyhow::Result<i32> {
    anyhow::bail!("this command is not built yet")
}
