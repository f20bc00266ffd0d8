//! The bytes of a written block: `--file-data=random` fill and the
//! self-checking `--validate` blocks (random body, CRC-32, offset). Shared by
//! prepare (fileset) and the run's workers (runner), so neither depends on the
//! other for them.

use crate::rng::Xoroshiro;

/// The smallest `--validate` block: the trailer is a CRC-32 and an offset.
pub(crate) const MIN_CHECKED_BLOCK: usize = 12;

/// Fill one `--validate` block: random bytes, then the CRC-32 of them (LE u32),
/// then the block's offset in its file (LE u64). Blocks shorter than 12 bytes
/// cannot carry the trailer and are left random (the options refuse them;
/// the last, short block of a file can still be one).
pub(crate) fn fill_checked_block(block: &mut [u8], offset: u64, rng: &mut Xoroshiro) {
    let len = block.len();
    if len < MIN_CHECKED_BLOCK {
        block.iter_mut().for_each(|b| *b = low_byte(rng.next_u64()));
        return;
    }
    let body = len - MIN_CHECKED_BLOCK;
    for b in &mut block[..body] {
        *b = low_byte(rng.next_u64());
    }
    let crc = crc32fast::hash(&block[..body]);
    block[body..body + 4].copy_from_slice(&crc.to_le_bytes());
    block[body + 4..].copy_from_slice(&offset.to_le_bytes());
}

/// One random byte per draw: the lowest of the value.
#[inline]
fn low_byte(v: u64) -> u8 {
    v.to_le_bytes()[0]
}

/// Check a `--validate` block; on failure, the FATAL lines sysbench prints.
pub(crate) fn check_block(block: &[u8], offset: u64, file: u32) -> Result<(), Vec<String>> {
    let len = block.len();
    if len < MIN_CHECKED_BLOCK {
        return Ok(());
    }
    let body = len - MIN_CHECKED_BLOCK;
    let stored = u32::from_le_bytes(block[body..body + 4].try_into().expect("4 bytes"));
    let calc = crc32fast::hash(&block[..body]);
    if stored != calc {
        return Err(vec![
            format!("Checksum mismatch in block with offset: {offset}"),
            format!("    Calculated value: {calc:#x}    Stored value: {stored:#x}"),
            format!("Validation failed on file {file}, block offset {offset}, exiting..."),
        ]);
    }
    let stored_off = u64::from_le_bytes(block[body + 4..].try_into().expect("8 bytes"));
    if stored_off != offset {
        return Err(vec![
            "Offset mismatch in block:".to_string(),
            format!("   Actual offset: {offset}    Stored offset: {stored_off}"),
            format!("Validation failed on file {file}, block offset {offset}, exiting..."),
        ]);
    }
    Ok(())
}

/// Fill a buffer with incompressible bytes (`--file-data=random`).
pub fn fill_random(buf: &mut [u8], rng: &mut Xoroshiro) {
    for chunk in buf.chunks_mut(8) {
        let v = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checked_blocks_round_trip() {
        let mut rng = Xoroshiro::from_state(3, 4);
        let mut b = vec![0u8; 4096];
        fill_checked_block(&mut b, 8192, &mut rng);
        assert!(check_block(&b, 8192, 0).is_ok());
        assert!(check_block(&b, 4096, 0).is_err());
        b[10] ^= 1;
        let err = check_block(&b, 8192, 2).unwrap_err();
        assert!(err[0].starts_with("Checksum mismatch in block with offset: 8192"));
        assert!(check_block(&[0u8; 4096], 0, 0).is_err(), "zero blocks fail");
    }
}
