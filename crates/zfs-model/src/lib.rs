//! ZFS layout model: capacity, reliability, performance, discrete-event simulator
