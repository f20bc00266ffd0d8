//! fileio: a sysbench-compatible file I/O benchmark.
//!
//! The ground every other crate stands on (docs/architecture.md):
//!
//! - the typed workload, [`spec::RunSpec`] and [`spec::FileSet`] (also
//!   named [`options::RunSpec`] and [`options::FileSet`]),
//!   built by a builder with sysbench's defaults, from option words or from a
//!   result's summary, refused with a typed [`workload::WorkloadError`]
//!   ([`workload`]);
//! - the one result type, [`result::RunResult`], made by
//!   [`result::RunResult::new`] and the summarising steps of [`summary`];
//! - one home each for seeded random streams ([`rng`]), the wall clock
//!   ([`clock`]) one-line message text ([`text`]) and
//!   what a terminal shows: its width and colour ([`terminal`]), and the
//!   one syntax of duration options ([`duration`]).
//!
//! Data flows one way through three groups of modules:
//!
//! - [`sysbench`], the front end: command-line words ([`sysbench::args`]) ->
//!   validated settings ([`options`]) -> one invocation with sysbench's
//!   output and exit code ([`sysbench::cli`]), printing through [`console`]
//!   and formatting sysbench's report ([`sysbench::report_text`]).
//! - [`run`], one process's run: the test files ([`run::fileset`]), the
//!   request [`run::generator`], the worker threads ([`run::runner`]) driving
//!   an [`engine`] (one per file in `engine/`), stopped through [`signals`],
//!   latency recorded in [`run::histograms`] on the
//!   [`run::clock`], written blocks from [`run::pattern`].
//! - [`fio`], a second front end: fio's job language (job files and
//!   command-line jobs) mapped onto the same [`spec::RunSpec`], one per
//!   `numjobs` clone, run on the same runner, reported in fio's layouts.
//! - [`job`], several processes as one: a [`job::coordinator`] (MPI with the
//!   `mpi` feature), the steps the ranks take together, and rank 0's merge.
//!
//! A run ends as a [`result::RunResult`] (the JSON document), checked by
//! [`warnings`] against the [`environment`] it ran in, and can be exported
//! as CSV rows, a live stream of intervals and Prometheus text ([`export`]). [`quick`] is the fixed
//! suite of `tankbench quick`.
//!
//! Two tests know the box rather than run a workload, each with its own
//! result document (a `kind` and a `schema_version`): [`slog`], the
//! log-device test of `tankbench slog` (with [`slog::device`], the checks
//! before a block device is overwritten), and [`probe`], the round trips of
//! `tankbench probe`.

pub mod clock;
pub mod console;
pub mod duration;
pub mod engine;
pub mod environment;
pub mod export;
pub mod failure;
pub mod fio;
pub mod job;
pub mod options;
pub mod probe;
pub mod quick;
pub mod result;
pub mod rng;
pub mod run;
pub mod signals;
pub mod slog;
pub mod spec;
pub mod summary;
pub mod sysbench;
pub mod terminal;
pub mod text;
pub mod warnings;
pub mod workload;
pub mod zfs_facts;
