//! The NFSv3 values a caller hands the client and gets back from it (RFC
//! 1813's nfs_fh3, stable_how and the part of fattr3 a benchmark reads);
//! apart from the procedures so that errors can name them too.

/// An NFSv3 file handle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fh(pub Vec<u8>);

/// How durable a WRITE must be before the server answers (stable_how).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stable {
    /// The server may answer before the data is on stable storage; COMMIT
    /// makes it durable.
    Unstable = 0,
    /// Data and the metadata needed to find it are durable on return.
    DataSync = 1,
    /// Data and all metadata are durable on return.
    FileSync = 2,
}

/// The attributes a benchmark uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr {
    /// ftype3: 1 regular file, 2 directory, ...
    pub(crate) ftype: u32,
    pub size: u64,
}
