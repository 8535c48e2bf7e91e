//! What the allocator takes: the sizes that estimates of a run's memory add up, as glibc's
//! malloc and the standard library's growth give them. Its own module so that every part
//! that counts its bytes can, without depending on the estimate.

/// The bytes the allocator takes for a block of `size` bytes: glibc's malloc rounds a request
/// plus its 8-byte header up to 16 bytes, and hands out at least 32. A `size` of 0 allocates
/// nothing.
#[must_use]
pub const fn block(size: usize) -> u64 {
    if size == 0 {
        return 0;
    }
    let chunk = (size + 8).div_ceil(16) * 16;
    (if chunk < 32 { 32 } else { chunk }) as u64
}

/// The capacity a vector grown one push at a time reaches for `len` elements: the next power
/// of two (at least 4, as the standard library starts).
#[must_use]
pub fn grown(len: f64) -> f64 {
    if len <= 0.0 {
        return 0.0;
    }
    let len = len.ceil().min(2f64.powi(62)) as u64;
    len.next_power_of_two().max(4) as f64
}

/// The room to reserve up front for a table whose estimated peak is `peak`: a quarter more,
/// so that a peak a little above its estimate does not double the table (and the address
/// space it takes) past what the estimate said.
#[must_use]
pub fn room_for(peak: f64) -> usize {
    let room = (peak.max(0.0) * 1.25).ceil();
    if room >= usize::MAX as f64 {
        usize::MAX
    } else {
        room as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_up_as_glibc_does() {
        assert_eq!(block(0), 0);
        assert_eq!(block(1), 32);
        assert_eq!(block(24), 32);
        assert_eq!(block(25), 48);
        assert_eq!(block(216), 224);
        assert_eq!(grown(0.0), 0.0);
        assert_eq!(grown(3.0), 4.0);
        assert_eq!(grown(1000.0), 1024.0);
        assert_eq!(grown(1024.0), 1024.0);
        assert_eq!(room_for(0.0), 0);
        assert_eq!(room_for(1000.0), 1250);
    }
}
