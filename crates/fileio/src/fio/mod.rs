//! fio's job language, run with fileio's own engines (`tankbench fio`).
pub mod value;
