//! The simulation's one event vocabulary: what the driver (`engine`: the
//! workers, the client and the link) and the ZFS server (`server`) schedule
//! on the shared event queue. Its own module so that neither side owns the
//! other's events.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Event {
    /// A worker starts its next fileio event.
    Issue(u32),
    /// The client has done its CPU work: the request goes on the wire.
    Send(u32),
    /// The request reaches the server.
    Arrive(u32),
    /// The server's CPU is done with it.
    Served(u32),
    /// Data is in the ARC (after a read from disk when it missed).
    Ready(u32),
    /// The request's log records are on stable storage; reply.
    Reply(u32),
    /// The reply has reached the client.
    Done(u32),
    /// The guest journal has committed what the worker's fsync waited for
    /// (or it needed no commit).
    Synced(u32),
    /// The commit's software time is over: zil_commit issues or joins a
    /// log block.
    Commit(u32),
    /// One-batch-in-flight ZIL: the next batch starts.
    ZilBatch,
    /// `zfs_txg_timeout` has passed: sync the open txg.
    Txg,
    /// A write's throttle delay (dmu_tx_delay) is over.
    Throttled(u32),
    /// The earliest txg write in flight completed (the number tells the
    /// latest such event from those an earlier one superseded).
    AsyncDone(u32),
    /// The syncing txg is on stable storage.
    TxgSynced,
}
