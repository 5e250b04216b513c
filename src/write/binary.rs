//! `--oformat binary` (`OUTPUT_FORMAT(binary)`): the output is the loaded sections' bytes, each at its load
//! address less the lowest one, the gaps zero, as GNU ld's binary target writes them (boot sectors, firmware
//! images). It is cut from the finished ELF image, so every section is laid out and relocated as in an ELF output.

use crate::diag::{Errors, Result};
use crate::layout::Layout;

/// The raw image of the ELF image `elf` that `lay` describes.
pub fn image(lay: &Layout, elf: &[u8]) -> Result<Vec<u8>> {
    // The sections with bytes in the file that a loader would load: allocated, not zero-fill, not empty.
    let parts: Vec<(u64, usize, usize)> = (lay.osecs.iter().enumerate())
        .filter(|(_, o)| o.shndx != 0 && o.is_alloc() && !o.is_nobits() && o.size > 0)
        .map(|(i, o)| {
            let lma = lay.script.lma.get(i).copied().unwrap_or(o.addr);
            (lma, o.offset as usize, o.size as usize)
        })
        .collect();
    let Some(base) = parts.iter().map(|p| p.0).min() else {
        return Ok(Vec::new());
    };
    let end = (parts.iter())
        .map(|p| (p.0 - base).saturating_add(p.2 as u64))
        .max()
        .unwrap_or(0);
    // A gap of more than the address space a file can hold (sections at both ends of memory) is refused, not
    // allocated.
    const LIMIT: u64 = 1 << 32;
    if end > LIMIT {
        return Err(Errors::one(format!(
            "--oformat binary: the loaded sections span {end:#x} bytes (from load address {base:#x}), too large \
             for a raw image"
        )));
    }
    let mut out = vec![0u8; end as usize];
    for (lma, offset, size) in parts {
        let at = (lma - base) as usize;
        out[at..at + size].copy_from_slice(&elf[offset..offset + size]);
    }
    Ok(out)
}
