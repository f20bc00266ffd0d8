//! The on-disk record: what every written block holds, and how a block read
//! back after a crash is classified against the version the journal says was
//! acknowledged.
//!
//! A block is a whole number of 512-byte sectors. Every sector starts with the
//! same header (only its sector index differs) and carries its own checksum,
//! so each sector can be judged alone: a block whose sectors are each valid
//! but disagree about which write they belong to was torn (the device wrote
//! part of it), while a sector that fails its own checksum was corrupted.
//! 512 bytes is the smallest logical sector Linux block devices expose
//! (`queue/logical_block_size` in sysfs(5) is at least 512), so no device can
//! tear inside one of them. The layout, byte by byte, is in docs/durability.md.

use fileio::rng::{splitmix64, GOLDEN_GAMMA};

/// The name of the marker file `durability write` puts in the directory
/// under test: the file set's layout, and proof that tankbench made it.
pub const FILESET_MARKER: &str = ".tankbench-durability";

/// The unit of the header's repetition and the smallest block size.
pub(crate) const SECTOR: usize = 512;
/// First bytes of every sector of a record.
pub(crate) const MAGIC: [u8; 8] = *b"TBDURBLK";
/// Format version in every header; bumped on any change of the layout.
pub(crate) const VERSION: u32 = 1;
/// Bytes of the header; the rest of the sector is payload.
pub(crate) const HEADER_LEN: usize = 72;

const OFF_RUN: usize = 8;
const OFF_VERSION: usize = 24;
const OFF_FILE: usize = 28;
const OFF_BLOCK: usize = 32;
const OFF_SEQ: usize = 40;
const OFF_THREAD: usize = 48;
const OFF_GENERATION: usize = 52;
const OFF_BLOCK_SIZE: usize = 56;
const OFF_SECTOR: usize = 60;
const OFF_BLOCK_CRC: usize = 64;
const OFF_SECTOR_CRC: usize = 68;

/// A 128-bit run identifier, random per `durability write` invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct RunId(pub [u8; 16]);

impl RunId {
    /// A fresh random id from the kernel's generator (getrandom(2)).
    pub(crate) fn random() -> std::io::Result<RunId> {
        let mut b = [0u8; 16];
        crate::wire::fill_random(&mut b)?;
        Ok(RunId(b))
    }

    /// One 64-bit number from the id (for seeding repeatable draws).
    pub(crate) fn seed(&self) -> u64 {
        let (lo, hi) = self.0.split_at(8);
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        // Mixed first: the halves of an id may be equal.
        fileio::rng::splitmix64(word(lo)) ^ word(hi)
    }

    /// 32 lowercase hex digits.
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The id written as [`hex`](Self::hex), or None.
    pub fn parse_hex(text: &str) -> Option<RunId> {
        if text.len() != 32 || !text.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let mut b = [0u8; 16];
        for (i, out) in b.iter_mut().enumerate() {
            *out = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(RunId(b))
    }
}

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hex())
    }
}

/// What identifies one write of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub run: RunId,
    pub file: u32,
    /// Offset in the file divided by the block size.
    pub block: u64,
    /// The run's write counter when this write was issued (1, 2, ...).
    pub seq: u64,
    pub thread: u32,
    /// How many writer sessions the file set had seen, this one included.
    pub generation: u32,
    pub block_size: u32,
}

/// Fill `buf` (a whole block: a multiple of [`SECTOR`] bytes, at most 65535
/// sectors) with the record of `h` and return the block checksum, the value
/// the writer reports to the recorder.
pub fn encode(h: &Header, buf: &mut [u8]) -> u32 {
    debug_assert!(buf.len().is_multiple_of(SECTOR) && !buf.is_empty());
    for (index, sector) in buf.chunks_exact_mut(SECTOR).enumerate() {
        sector[..8].copy_from_slice(&MAGIC);
        sector[OFF_RUN..OFF_RUN + 16].copy_from_slice(&h.run.0);
        put_u32(sector, OFF_VERSION, VERSION);
        put_u32(sector, OFF_FILE, h.file);
        put_u64(sector, OFF_BLOCK, h.block);
        put_u64(sector, OFF_SEQ, h.seq);
        put_u32(sector, OFF_THREAD, h.thread);
        put_u32(sector, OFF_GENERATION, h.generation);
        put_u32(sector, OFF_BLOCK_SIZE, h.block_size);
        let index = u16::try_from(index).unwrap_or(u16::MAX);
        sector[OFF_SECTOR..OFF_SECTOR + 2].copy_from_slice(&index.to_le_bytes());
        sector[OFF_SECTOR + 2..OFF_BLOCK_CRC].fill(0);
        fill_payload(&mut sector[HEADER_LEN..], h, index);
    }
    let crc = block_checksum(buf);
    for sector in buf.chunks_exact_mut(SECTOR) {
        put_u32(sector, OFF_BLOCK_CRC, crc);
        let s = sector_checksum(sector);
        put_u32(sector, OFF_SECTOR_CRC, s);
    }
    crc
}

/// CRC-32 (IEEE 802.3 polynomial, as crc32fast computes it) over every sector
/// with its two checksum fields left out.
pub(crate) fn block_checksum(block: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for sector in block.chunks_exact(SECTOR) {
        h.update(&sector[..OFF_BLOCK_CRC]);
        h.update(&sector[HEADER_LEN..]);
    }
    h.finalize()
}

/// CRC-32 over one sector with its own checksum field left out.
fn sector_checksum(sector: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&sector[..OFF_SECTOR_CRC]);
    h.update(&sector[HEADER_LEN..]);
    h.finalize()
}

/// Payload bytes that differ per run, write and sector, so that a block never
/// compresses or deduplicates to nothing and a stale copy never matches a new
/// one. SplitMix64 over a counter: word `i` mixes the start plus `i` steps
/// of its increment.
fn fill_payload(payload: &mut [u8], h: &Header, sector: u16) {
    let run_lo = u64::from_le_bytes(h.run.0[..8].try_into().unwrap_or([0; 8]));
    let run_hi = u64::from_le_bytes(h.run.0[8..].try_into().unwrap_or([0; 8]));
    let mut state = run_lo
        ^ run_hi.rotate_left(17)
        ^ h.seq.wrapping_mul(GOLDEN_GAMMA)
        ^ (u64::from(sector) << 48);
    for chunk in payload.chunks_mut(8) {
        let bytes = splitmix64(state).to_le_bytes();
        state = state.wrapping_add(GOLDEN_GAMMA);
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}

fn put_u32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_le_bytes());
}

fn put_u64(b: &mut [u8], off: usize, v: u64) {
    b[off..off + 8].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(b: &[u8], off: usize) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[off..off + 4]);
    u32::from_le_bytes(a)
}

fn get_u64(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

/// One sector as read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SectorState {
    /// All zero bytes: never written (the files are prepared with zeros) or
    /// zeroed since.
    Zero,
    /// A record sector whose own checksum holds, at the right place, with the
    /// block checksum it carries.
    Valid(Header, u32),
    /// Anything else: not ours, damaged, or a record of another place.
    Invalid(&'static str),
}

fn read_sector(sector: &[u8], index: usize, file: u32, block: u64, block_size: u32) -> SectorState {
    if sector.iter().all(|&b| b == 0) {
        return SectorState::Zero;
    }
    if sector[..8] != MAGIC {
        return SectorState::Invalid("not a record (no magic)");
    }
    if get_u32(sector, OFF_SECTOR_CRC) != sector_checksum(sector) {
        return SectorState::Invalid("sector checksum mismatch");
    }
    if get_u32(sector, OFF_VERSION) != VERSION {
        return SectorState::Invalid("record format version differs");
    }
    let mut run = [0u8; 16];
    run.copy_from_slice(&sector[OFF_RUN..OFF_RUN + 16]);
    let h = Header {
        run: RunId(run),
        file: get_u32(sector, OFF_FILE),
        block: get_u64(sector, OFF_BLOCK),
        seq: get_u64(sector, OFF_SEQ),
        thread: get_u32(sector, OFF_THREAD),
        generation: get_u32(sector, OFF_GENERATION),
        block_size: get_u32(sector, OFF_BLOCK_SIZE),
    };
    let idx = u16::from_le_bytes([sector[OFF_SECTOR], sector[OFF_SECTOR + 1]]);
    if h.file != file || h.block != block || h.block_size != block_size || usize::from(idx) != index
    {
        return SectorState::Invalid("a record of another place (misdirected write)");
    }
    SectorState::Valid(h, get_u32(sector, OFF_BLOCK_CRC))
}

/// The acknowledged version of a block, from the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Expected {
    pub run: RunId,
    pub file: u32,
    pub block: u64,
    pub seq: u64,
    pub checksum: u32,
}

/// How the acknowledged write of a block survived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The acknowledged version, whole.
    Intact,
    /// A later write of the block that was never acknowledged: allowed (it
    /// was issued after the acknowledged one, so the application asked for
    /// it). `torn` when it replaced only part of the acknowledged version,
    /// every sector still from the acknowledged write or later.
    Newer { found_seq: u64, torn: bool },
    /// An older version: the acknowledged write is gone.
    Lost(Lost),
    /// Some sectors from the acknowledged (or a later) write, some older:
    /// the device wrote part of the block and lost the rest.
    Torn { sectors_old: usize, sectors: usize },
    /// Bytes no write produced: a checksum fails, or the record is of another
    /// place.
    Corrupt(String),
}

/// What an acknowledged write was replaced by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lost {
    /// An earlier write of this run (`found_seq` < the acknowledged one).
    Older { found_seq: u64 },
    /// A write of another (earlier or unknown) run.
    OtherRun { run: RunId, found_seq: u64 },
    /// Zeros: the block as prepared, or zeroed.
    Zeroed,
    /// Not there at all: the file is missing or ends before the block.
    Absent(String),
}

impl Outcome {
    /// Whether this outcome breaks the promise of an acknowledged write.
    pub(crate) fn is_failure(&self) -> bool {
        matches!(
            self,
            Outcome::Lost(_) | Outcome::Torn { .. } | Outcome::Corrupt(_)
        )
    }

    /// One-word class, as counted in the result.
    pub fn class(&self) -> &'static str {
        match self {
            Outcome::Intact => "intact",
            Outcome::Newer { .. } => "unacknowledged_newer",
            Outcome::Lost(_) => "lost",
            Outcome::Torn { .. } => "torn",
            Outcome::Corrupt(_) => "corrupt",
        }
    }

    /// What was found, in words.
    pub fn describe(&self) -> String {
        match self {
            Outcome::Intact => "the acknowledged version".into(),
            Outcome::Newer { found_seq, torn } => format!(
                "a later, unacknowledged write (sequence {found_seq}){}",
                if *torn { ", partly written" } else { "" }
            ),
            Outcome::Lost(Lost::Older { found_seq }) => {
                format!("an older version (sequence {found_seq})")
            }
            Outcome::Lost(Lost::OtherRun { run, found_seq }) => {
                format!("a block of another run ({run}, sequence {found_seq})")
            }
            Outcome::Lost(Lost::Zeroed) => "zeros (the block as prepared)".into(),
            Outcome::Lost(Lost::Absent(why)) => format!("nothing: {why}"),
            Outcome::Torn {
                sectors_old,
                sectors,
            } => format!("torn: {sectors_old} of {sectors} sectors hold older content"),
            Outcome::Corrupt(why) => format!("corrupt: {why}"),
        }
    }
}

/// Classify `block` (read back from where `exp` was written) against the
/// acknowledged version `exp`. `is_later_run` says whether a run id belongs
/// to a writer session that started after `exp.run`'s (its writes may
/// legitimately replace the acknowledged one).
pub(crate) fn classify(
    block: &[u8],
    exp: &Expected,
    is_later_run: &dyn Fn(&RunId) -> bool,
) -> Outcome {
    let block_size = u32::try_from(block.len()).unwrap_or(u32::MAX);
    if block.is_empty() || !block.len().is_multiple_of(SECTOR) {
        return Outcome::Corrupt(format!("short block ({} bytes)", block.len()));
    }
    let sectors: Vec<SectorState> = block
        .chunks_exact(SECTOR)
        .enumerate()
        .map(|(i, s)| read_sector(s, i, exp.file, exp.block, block_size))
        .collect();
    if sectors.iter().all(|s| *s == SectorState::Zero) {
        return Outcome::Lost(Lost::Zeroed);
    }
    if let Some(why) = sectors.iter().find_map(|s| match s {
        SectorState::Invalid(why) => Some(*why),
        _ => None,
    }) {
        return Outcome::Corrupt(why.to_string());
    }
    // Every sector is zero or a valid record sector: one write, or a tear.
    let headers: Vec<(Header, u32)> = sectors
        .iter()
        .filter_map(|s| match s {
            SectorState::Valid(h, c) => Some((*h, *c)),
            _ => None,
        })
        .collect();
    let (first, first_crc) = headers[0];
    let one_write = headers.len() == sectors.len()
        && headers
            .iter()
            .all(|(h, c)| h.run == first.run && h.seq == first.seq && *c == first_crc);
    if one_write {
        if block_checksum(block) != first_crc {
            return Outcome::Corrupt("block checksum mismatch".into());
        }
        if first.run != exp.run {
            if is_later_run(&first.run) {
                return Outcome::Newer {
                    found_seq: first.seq,
                    torn: false,
                };
            }
            return Outcome::Lost(Lost::OtherRun {
                run: first.run,
                found_seq: first.seq,
            });
        }
        return match first.seq.cmp(&exp.seq) {
            std::cmp::Ordering::Equal if first_crc == exp.checksum => Outcome::Intact,
            std::cmp::Ordering::Equal => Outcome::Corrupt(format!(
                "checksum {first_crc:08x} differs from the acknowledged {:08x}",
                exp.checksum
            )),
            std::cmp::Ordering::Less => Outcome::Lost(Lost::Older {
                found_seq: first.seq,
            }),
            std::cmp::Ordering::Greater => Outcome::Newer {
                found_seq: first.seq,
                torn: false,
            },
        };
    }
    // A tear. A sector counts as new when it is from the acknowledged write
    // or a later one; anything else (zeros, earlier writes, other runs) is old.
    let is_new = |s: &SectorState| match s {
        SectorState::Valid(h, _) if h.run == exp.run => h.seq >= exp.seq,
        SectorState::Valid(h, _) => is_later_run(&h.run),
        _ => false,
    };
    let sectors_old = sectors.iter().filter(|s| !is_new(s)).count();
    if sectors_old == 0 {
        let found_seq = headers.iter().map(|(h, _)| h.seq).max().unwrap_or(exp.seq);
        return Outcome::Newer {
            found_seq,
            torn: true,
        };
    }
    Outcome::Torn {
        sectors_old,
        sectors: sectors.len(),
    }
}

/// A buffer aligned for O_DIRECT (4096 covers every logical block size).
pub(crate) struct Aligned {
    storage: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    pub(crate) fn new(len: usize) -> Aligned {
        let storage = vec![0u8; len + 4096];
        let misalign = storage.as_ptr() as usize % 4096;
        let start = if misalign == 0 { 0 } else { 4096 - misalign };
        Aligned {
            storage,
            start,
            len,
        }
    }
    pub(crate) fn buf(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: RunId = RunId([7; 16]);
    const OTHER: RunId = RunId([9; 16]);

    fn header(seq: u64) -> Header {
        Header {
            run: RUN,
            file: 2,
            block: 5,
            seq,
            thread: 1,
            generation: 3,
            block_size: 4096,
        }
    }

    fn block_of(h: &Header) -> (Vec<u8>, u32) {
        let mut b = vec![0u8; 4096];
        let crc = encode(h, &mut b);
        (b, crc)
    }

    fn expect(seq: u64, checksum: u32) -> Expected {
        Expected {
            run: RUN,
            file: 2,
            block: 5,
            seq,
            checksum,
        }
    }

    fn no_later(_: &RunId) -> bool {
        false
    }

    #[test]
    fn payloads_stay_those_of_earlier_releases() {
        // Recorded from the release before the payload used fileio's
        // SplitMix64: a verifier reads blocks an older writer wrote.
        let (b, crc) = block_of(&header(11));
        let word = |off: usize| u64::from_le_bytes(b[off..off + 8].try_into().unwrap());
        assert_eq!(
            (
                crc,
                word(HEADER_LEN),
                word(HEADER_LEN + 8),
                word(SECTOR + HEADER_LEN)
            ),
            (
                486_296_850,
                11_893_691_889_868_043_810,
                373_458_282_963_285_090,
                9_072_930_384_699_489_367
            )
        );
    }

    #[test]
    fn an_untouched_record_is_intact() {
        let (b, crc) = block_of(&header(10));
        assert_eq!(classify(&b, &expect(10, crc), &no_later), Outcome::Intact);
        assert_eq!(block_checksum(&b), crc);
    }

    #[test]
    fn every_sector_carries_the_header() {
        let (b, _) = block_of(&header(10));
        for (i, s) in b.chunks_exact(SECTOR).enumerate() {
            assert_eq!(&s[..8], &MAGIC);
            assert_eq!(get_u64(s, OFF_SEQ), 10);
            assert_eq!(usize::from(u16::from_le_bytes([s[60], s[61]])), i);
        }
    }

    #[test]
    fn a_flipped_bit_is_corrupt_wherever_it_lands() {
        let (b, crc) = block_of(&header(10));
        for pos in [0, 9, 45, 70, 100, 511, 512 + 40, 4095] {
            let mut bad = b.clone();
            bad[pos] ^= 0x10;
            let got = classify(&bad, &expect(10, crc), &no_later);
            assert!(matches!(got, Outcome::Corrupt(_)), "bit at {pos}: {got:?}");
            assert!(got.is_failure());
        }
    }

    #[test]
    fn a_torn_block_is_torn_not_corrupt() {
        // First sectors of the new write, the rest still the old version.
        let (old, _) = block_of(&header(4));
        let (new, crc) = block_of(&header(10));
        for cut in [1, 4, 7] {
            let mut torn = old.clone();
            torn[..cut * SECTOR].copy_from_slice(&new[..cut * SECTOR]);
            assert_eq!(
                classify(&torn, &expect(10, crc), &no_later),
                Outcome::Torn {
                    sectors_old: 8 - cut,
                    sectors: 8
                }
            );
        }
        // Over a block never written before: new sectors, then zeros.
        let mut torn = vec![0u8; 4096];
        torn[..2 * SECTOR].copy_from_slice(&new[..2 * SECTOR]);
        assert_eq!(
            classify(&torn, &expect(10, crc), &no_later),
            Outcome::Torn {
                sectors_old: 6,
                sectors: 8
            }
        );
    }

    #[test]
    fn an_old_generation_is_lost() {
        let (old, _) = block_of(&header(4));
        let (_, crc) = block_of(&header(10));
        let got = classify(&old, &expect(10, crc), &no_later);
        assert_eq!(got, Outcome::Lost(Lost::Older { found_seq: 4 }));
        assert!(got.is_failure());
    }

    #[test]
    fn a_later_unacknowledged_write_is_allowed() {
        let (newer, _) = block_of(&header(12));
        let got = classify(&newer, &expect(10, 0), &no_later);
        assert_eq!(
            got,
            Outcome::Newer {
                found_seq: 12,
                torn: false
            }
        );
        assert!(!got.is_failure());
        // Torn between the acknowledged and a later write: still allowed.
        let (acked, crc) = block_of(&header(10));
        let mut mix = acked.clone();
        mix[..SECTOR].copy_from_slice(&newer[..SECTOR]);
        assert_eq!(
            classify(&mix, &expect(10, crc), &no_later),
            Outcome::Newer {
                found_seq: 12,
                torn: true
            }
        );
    }

    #[test]
    fn a_block_of_another_run_is_lost_unless_that_run_came_later() {
        let mut h = header(10);
        h.run = OTHER;
        let (b, _) = block_of(&h);
        assert_eq!(
            classify(&b, &expect(10, 0), &no_later),
            Outcome::Lost(Lost::OtherRun {
                run: OTHER,
                found_seq: 10
            })
        );
        let later = |r: &RunId| *r == OTHER;
        assert!(matches!(
            classify(&b, &expect(10, 0), &later),
            Outcome::Newer { .. }
        ));
    }

    #[test]
    fn an_all_zero_block_is_lost() {
        let got = classify(&[0u8; 4096], &expect(10, 1), &no_later);
        assert_eq!(got, Outcome::Lost(Lost::Zeroed));
        assert!(got.is_failure());
    }

    #[test]
    fn a_record_of_another_place_is_corrupt() {
        let mut h = header(10);
        h.block = 6;
        let (b, crc) = block_of(&h);
        assert!(matches!(
            classify(&b, &expect(10, crc), &no_later),
            Outcome::Corrupt(_)
        ));
    }

    #[test]
    fn a_foreign_block_is_corrupt() {
        let b = vec![0x41u8; 4096];
        assert!(matches!(
            classify(&b, &expect(10, 1), &no_later),
            Outcome::Corrupt(_)
        ));
    }

    #[test]
    fn same_header_different_checksum_is_corrupt() {
        let (b, crc) = block_of(&header(10));
        assert!(matches!(
            classify(&b, &expect(10, crc ^ 1), &no_later),
            Outcome::Corrupt(_)
        ));
    }

    #[test]
    fn one_sector_blocks_work() {
        let mut h = header(3);
        h.block_size = 512;
        let mut b = vec![0u8; 512];
        let crc = encode(&h, &mut b);
        assert_eq!(classify(&b, &expect(3, crc), &no_later), Outcome::Intact);
    }

    #[test]
    fn run_ids_round_trip_through_hex() {
        let id = RunId::random().unwrap();
        assert_eq!(RunId::parse_hex(&id.hex()), Some(id));
        assert_eq!(RunId::parse_hex("xyz"), None);
        assert_eq!(RunId::parse_hex(&"g".repeat(32)), None);
        assert_ne!(RunId::random().unwrap(), id);
    }
}
