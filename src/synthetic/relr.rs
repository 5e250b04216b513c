//! `.relr.dyn`: the packed relative relocations (`-z pack-relative-relocs`), encoded from the addresses of the
//! places they relocate and written from the same entries. Its size moves those places, so the addresses pass
//! sizes it in rounds (`first_size`, then `encode` with the addresses until the size is stable, `pad`ded when a
//! round's encoding is shorter than the room made for it).

/// The size before any place has an address: one entry where there is anything to relocate, which keeps the
/// section (its final size comes with the addresses).
pub fn first_size(any_sites: bool) -> u64 {
    8 * any_sites as u64
}

/// The size of `entries`.
pub fn size(entries: &[u64]) -> u64 {
    8 * entries.len() as u64
}

/// The RELR encoding of `addrs` (ascending, word-aligned): an address entry relocates its word and starts a run;
/// each following odd entry is a bitmap whose bit k (k = 1..63) relocates the word k-1 places after the previous
/// entry's range, 63 words per bitmap.
pub fn encode(addrs: impl Iterator<Item = u64>) -> Vec<u64> {
    const BITS: u64 = 63;
    let mut out = Vec::new();
    let mut addrs = addrs.peekable();
    while let Some(start) = addrs.next() {
        out.push(start);
        let mut base = start + 8;
        loop {
            let mut bitmap = 0u64;
            while let Some(&a) = addrs.peek() {
                let d = a.wrapping_sub(base);
                if a < base || d >= BITS * 8 || !d.is_multiple_of(8) {
                    break;
                }
                bitmap |= 1 << (d / 8);
                addrs.next();
            }
            if bitmap == 0 {
                break;
            }
            out.push((bitmap << 1) | 1);
            base += BITS * 8;
        }
    }
    out
}

/// Fills `entries` up to `size` bytes with empty bitmaps, which relocate nothing: a later round's encoding may be
/// shorter than the room an earlier one made, and the section keeps its size so that nothing after it moves.
pub fn pad(entries: &mut Vec<u64>, size: u64) {
    entries.resize((size / 8) as usize, 1);
}

/// Writes `.relr.dyn` (`out` is `size(entries)` bytes).
pub fn write(out: &mut [u8], entries: &[u64]) {
    for (chunk, e) in out.chunks_exact_mut(8).zip(entries) {
        chunk.copy_from_slice(&e.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relr_encoding() {
        // A run: the address entry, a bitmap for the next two words, a second bitmap 63 words on, a far address.
        let addrs = [0x1000, 0x1008, 0x1010, 0x1200, 0x5000, 0x5010];
        assert_eq!(
            encode(addrs.into_iter()),
            vec![0x1000, 0b111, 0b11, 0x5000, 0b101]
        );
        // A word exactly 63 words past a bitmap's base falls into the next bitmap; an empty bitmap ends the run.
        assert_eq!(
            encode([0x2000, 0x2008 + 63 * 8 * 2].into_iter()),
            vec![0x2000, 0x2008 + 63 * 8 * 2]
        );
        assert_eq!(encode(std::iter::empty()), Vec::<u64>::new());
    }

    #[test]
    fn padding_relocates_nothing() {
        let mut e = encode([0x1000, 0x1008].into_iter());
        pad(&mut e, 32);
        assert_eq!(e, [0x1000, 0b11, 1, 1]);
        let mut out = [0u8; 32];
        write(&mut out, &e);
        assert_eq!(&out[8..16], &3u64.to_le_bytes());
        assert_eq!(size(&e), 32);
    }
}
