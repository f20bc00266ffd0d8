//! The sysbench-compatible front end: `sysbench fileio …` words to output and
//! exit code, with sysbench 1.0.20's messages, streams and report text.

pub mod args;
pub mod cli;
pub mod report_text;
