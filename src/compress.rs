//! Compressing a section's bytes into an `SHF_COMPRESSED` section (`--compress-debug-sections`): an `Elf64_Chdr`,
//! then a zlib stream or zstd frames.
//!
//! The bytes are compressed in chunks on all threads. For zlib each chunk is raw deflate of its own, ended by a
//! sync flush (an empty stored block, so that it ends on a byte boundary and the next chunk's blocks follow it)
//! and the last by a final block: together one deflate stream, in a zlib header and the Adler-32 of the whole,
//! combined from the chunks'. For zstd each chunk is a frame, and a zstd stream is a sequence of frames. A chunk
//! starts with an empty window, which costs a little of the ratio (`CHUNK` is chosen so that this is small).

use crate::args::DebugCompression;
use object::elf as E;
use rayon::prelude::*;

/// The bytes of one compressed chunk: 1 MiB, as lld and mold use. Smaller or larger chunks changed neither the size
/// nor the time much on rg-debug (`bench/README.md`), and larger ones leave threads idle where debug information is
/// small.
const CHUNK: usize = 1 << 20;

/// zlib's level: 1, the fastest, as lld and mold use (level 2 is smaller but much slower: `bench/README.md`).
const ZLIB_LEVEL: u32 = 1;

/// zstd's level: 1, the fastest of the usual levels, and still smaller than zlib's output (lld and mold use 3:
/// smaller, for more time; `bench/README.md`).
const ZSTD_LEVEL: i32 = 1;

/// Whether `--compress-debug-sections` compresses an output section: a non-allocated one with contents whose name
/// starts with `.debug_` (GNU ld's and lld's rule).
pub fn compressible(name: &[u8], flags: u64, sh_type: u32) -> bool {
    flags & E::SHF_ALLOC as u64 == 0 && sh_type != E::SHT_NOBITS && name.starts_with(b".debug_")
}

/// A section's compressed contents: the header (`Elf64_Chdr`, and zlib's two bytes), the chunks' streams and
/// zlib's checksum, in that order.
pub struct Compressed {
    head: Vec<u8>,
    chunks: Vec<Vec<u8>>,
    tail: Vec<u8>,
}

impl Compressed {
    /// The size of the compressed section.
    pub fn len(&self) -> u64 {
        (self.head.len() + self.tail.len() + self.chunks.iter().map(Vec::len).sum::<usize>()) as u64
    }
    /// Writes the compressed section into `out` (`len()` bytes), the chunks on all threads.
    pub fn write_to(&self, out: &mut [u8]) {
        let (head, mut rest) = out.split_at_mut(self.head.len());
        head.copy_from_slice(&self.head);
        let mut parts = Vec::with_capacity(self.chunks.len());
        for c in &self.chunks {
            let (part, r) = rest.split_at_mut(c.len());
            parts.push(part);
            rest = r;
        }
        rest.copy_from_slice(&self.tail);
        parts
            .into_par_iter()
            .zip(&self.chunks)
            .for_each(|(to, from)| to.copy_from_slice(from));
    }
    /// The compressed section in one vector.
    pub fn into_bytes(self) -> Vec<u8> {
        let mut v = vec![0; self.len() as usize];
        self.write_to(&mut v);
        v
    }
}

/// Compresses `data`, the contents of a section aligned to `align`, the chunks on all threads; `None` where that
/// does not make it smaller (as lld and GNU ld, which leave such sections as they are: small ones).
pub fn compress(data: &[u8], how: DebugCompression, align: u64) -> Option<Compressed> {
    let ch_type = match how {
        DebugCompression::Zlib => E::ELFCOMPRESS_ZLIB,
        DebugCompression::Zstd => E::ELFCOMPRESS_ZSTD,
    };
    let mut head = Vec::with_capacity(26);
    head.extend_from_slice(&ch_type.to_le_bytes());
    head.extend_from_slice(&0u32.to_le_bytes()); // ch_reserved
    head.extend_from_slice(&(data.len() as u64).to_le_bytes());
    head.extend_from_slice(&align.max(1).to_le_bytes());
    let last = data.len().div_ceil(CHUNK).saturating_sub(1);
    let (chunks, tail) = match how {
        DebugCompression::Zlib => {
            // CMF: deflate with a 32 KiB window; FLG: the fastest level, and the check bits (CMF·256 + FLG is a
            // multiple of 31).
            head.extend_from_slice(&[0x78, 0x01]);
            let (chunks, sums): (Vec<Vec<u8>>, Vec<(u32, usize)>) = data
                .par_chunks(CHUNK)
                .enumerate()
                .map(|(i, c)| (deflate(c, i == last), (adler32(c), c.len())))
                .unzip();
            let sum = sums
                .iter()
                .fold(1, |a, &(b, len)| adler32_combine(a, b, len as u64));
            (chunks, sum.to_be_bytes().to_vec())
        }
        DebugCompression::Zstd => (data.par_chunks(CHUNK).map(zstd_frame).collect(), Vec::new()),
    };
    let out = Compressed { head, chunks, tail };
    (out.len() < data.len() as u64).then_some(out)
}

/// Raw deflate of one chunk: ended by a sync flush, or by the final block if it is the last.
fn deflate(chunk: &[u8], last: bool) -> Vec<u8> {
    use flate2::{Compress, Compression, FlushCompress, Status};
    let mut c = Compress::new(Compression::new(ZLIB_LEVEL), false);
    // Deflate's worst case is the stored blocks' 5 bytes per 16 KiB, plus the flush or the final block.
    let mut out = Vec::with_capacity(chunk.len() + chunk.len() / 16_000 * 5 + 64);
    let flush = if last {
        FlushCompress::Finish
    } else {
        FlushCompress::Sync
    };
    loop {
        let input = &chunk[c.total_in() as usize..];
        let status = c
            .compress_vec(input, &mut out, flush)
            .expect("deflate of a buffer in memory cannot fail");
        let done = c.total_in() as usize == chunk.len()
            && out.len() < out.capacity()
            && (!last || status == Status::StreamEnd);
        if done {
            return out;
        }
        out.reserve(out.capacity().max(1024));
    }
}

/// One chunk as a zstd frame.
fn zstd_frame(chunk: &[u8]) -> Vec<u8> {
    zstd::bulk::compress(chunk, ZSTD_LEVEL)
        .expect("zstd compression of a buffer in memory cannot fail")
}

const ADLER_MOD: u64 = 65521;

/// The Adler-32 checksum of `data` (RFC 1950). Per block, `a` gains the bytes' sum and `b` gains `a` once per
/// byte plus each byte weighted by the bytes from it to the block's end: two sums without a dependency from byte to
/// byte, which the compiler vectorises.
fn adler32(data: &[u8]) -> u32 {
    let m = ADLER_MOD;
    let (mut a, mut b) = (1u64, 0u64);
    // 5552 bytes: the weighted sum of a block cannot overflow 32 bits.
    for block in data.chunks(5552) {
        let n = block.len() as u32;
        let (mut sum, mut weighted) = (0u32, 0u32);
        for (i, &x) in block.iter().enumerate() {
            sum += x as u32;
            weighted += (n - i as u32) * x as u32;
        }
        b = (b + n as u64 * a + weighted as u64) % m;
        a = (a + sum as u64) % m;
    }
    ((b << 16) | a) as u32
}

/// The Adler-32 of the concatenation of two byte strings, from their checksums and the second's length: its sums
/// are shifted by the first's (the second's `a` gains the first's `a - 1`; its `b` gains that once per byte, and
/// the first's `b`).
fn adler32_combine(first: u32, second: u32, len2: u64) -> u32 {
    let m = ADLER_MOD;
    let (a1, b1) = ((first & 0xffff) as u64, (first >> 16) as u64);
    let (a2, b2) = ((second & 0xffff) as u64, (second >> 16) as u64);
    let a = (a1 + a2 + m - 1) % m;
    let b = (b1 + b2 + (len2 % m) * ((a1 + m - 1) % m)) % m;
    ((b << 16) | a) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn sample(n: usize) -> Vec<u8> {
        // Compressible but not trivial: a counter's text and a pseudo-random byte.
        let mut x = 1u32;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                if i % 7 == 0 {
                    (x >> 24) as u8
                } else {
                    b"0123456789"[i / 7 % 10]
                }
            })
            .collect()
    }

    fn body(c: Compressed) -> (Vec<u8>, Vec<u8>) {
        let v = c.into_bytes();
        (v[..24].to_vec(), v[24..].to_vec())
    }

    #[test]
    fn adler32_matches_the_definition_and_combines() {
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(b""), 1);
        // The largest sums: every byte 0xff, over several blocks, against the definition.
        let ff = vec![0xffu8; 20_000];
        let (mut a, mut b) = (1u64, 0u64);
        for &x in &ff {
            a = (a + x as u64) % ADLER_MOD;
            b = (b + a) % ADLER_MOD;
        }
        assert_eq!(adler32(&ff), ((b << 16) | a) as u32);
        let data = sample(300_000);
        let whole = adler32(&data);
        for cut in [0, 1, 5552, 100_000, 299_999, 300_000] {
            let (x, y) = data.split_at(cut);
            assert_eq!(
                adler32_combine(adler32(x), adler32(y), y.len() as u64),
                whole
            );
        }
    }

    #[test]
    fn zlib_chunks_make_one_stream() {
        for n in [3000, CHUNK, CHUNK + 1, 3 * CHUNK + 12345] {
            let data = sample(n);
            let (chdr, z) = body(compress(&data, DebugCompression::Zlib, 8).unwrap());
            assert_eq!(chdr[0..4], 1u32.to_le_bytes());
            assert_eq!(chdr[8..16], (n as u64).to_le_bytes());
            assert_eq!(chdr[16..24], 8u64.to_le_bytes());
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(&z[..])
                .read_to_end(&mut out)
                .unwrap();
            assert!(out == data, "{n} bytes");
        }
    }

    #[test]
    fn zstd_chunks_make_one_stream() {
        let data = sample(2 * CHUNK + 777);
        let (chdr, z) = body(compress(&data, DebugCompression::Zstd, 1).unwrap());
        assert_eq!(chdr[0..4], 2u32.to_le_bytes());
        assert_eq!(zstd::stream::decode_all(&z[..]).unwrap(), data);
    }

    #[test]
    fn what_does_not_shrink_stays() {
        assert!(compress(b"abc", DebugCompression::Zlib, 1).is_none());
        assert!(compress(b"", DebugCompression::Zstd, 1).is_none());
        assert!(compress(&[7; 200], DebugCompression::Zstd, 1).is_some());
    }
}
