//! Option values more than one command takes, checked the same way
//! everywhere (one line naming the option and what it accepts).

/// A count option's value (`--max-sim-events`, `--max-cells`): one line
/// naming the option when it is not a whole number.
pub(crate) fn count_option(option: &str, value: &str) -> anyhow::Result<u64> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| {
            anyhow::anyhow!("simulate: {option}={value}: accepted: a whole number from 1 up")
        })
}
