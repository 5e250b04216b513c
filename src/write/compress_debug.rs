//! `--compress-debug-sections`: the `.debug_*` output sections are written first, into memory, by the writers of
//! their parts (input sections with their relocations applied, merged strings, a script's fills and data), then
//! compressed (`crate::compress`, on all threads); their new sizes place the non-allocated sections again
//! (`layout::place_nonalloc_again`: they all follow the allocated ones, which keep their addresses), and `fill`
//! copies the compressed bytes in. Without the option none of this runs, and the writers' only extra work is a
//! flag test per section.

use super::{Image, WriteCx};
use crate::arch::Arch;
use crate::args::{Config, DebugCompression};
use crate::compress::{self, Compressed};
use crate::diag::Result;
use crate::gc::Liveness;
use crate::index::OsecId;
use crate::layout::{Layout, OutputSection};
use crate::resolve::Resolved;
use crate::symbols::SymbolSpace;
use object::elf as E;
use rayon::prelude::*;

/// The contents of the sections written apart, for `fill` to copy in.
pub struct Apart(Vec<(OsecId, Contents)>);

enum Contents {
    Compressed(Compressed),
    /// A section that compression would not shrink, as it is.
    Plain(Vec<u8>),
}

/// Writes and compresses the debug sections of the layout, sets their compressed sizes and flags, and places the
/// non-allocated sections again.
pub fn compress<A: Arch>(
    config: &Config,
    res: &Resolved,
    space: &SymbolSpace,
    live: &Liveness,
    lay: &mut Layout,
    how: DebugCompression,
) -> Result<Apart> {
    let picked: Vec<usize> = (lay.osecs.iter().enumerate())
        .filter(|(_, o)| o.shndx != 0 && compress::compressible(&o.name, o.flags, o.sh_type))
        .map(|(i, _)| i)
        .collect();
    if picked.is_empty() {
        return Ok(Apart(Vec::new()));
    }
    for &i in &picked {
        lay.osecs[i].written_apart = true;
    }
    let bytes = {
        let _t = crate::timing::span("write debug sections");
        write_apart::<A>(config, res, space, live, lay, &picked)?
    };
    let _t = crate::timing::span("compress debug sections");
    let contents: Vec<Contents> = picked
        .par_iter()
        .map(|&i| {
            let o = &lay.osecs[i];
            let data = &bytes[o.offset as usize..(o.offset + o.size) as usize];
            match compress::compress(data, how, o.align) {
                Some(c) => Contents::Compressed(c),
                None => Contents::Plain(data.to_vec()),
            }
        })
        .collect();
    drop(bytes);
    for (&i, c) in picked.iter().zip(&contents) {
        if let Contents::Compressed(c) = c {
            set_compressed(&mut lay.osecs[i], c.len());
        }
    }
    crate::layout::place_nonalloc_again(lay)?;
    Ok(Apart(
        picked.into_iter().map(OsecId::new).zip(contents).collect(),
    ))
}

/// The header of a compressed section: its size, `SHF_COMPRESSED`, and the `Elf64_Chdr`'s alignment (GNU ld's;
/// the uncompressed alignment is in the `Chdr`).
fn set_compressed(o: &mut OutputSection, size: u64) {
    o.size = size;
    o.flags |= E::SHF_COMPRESSED as u64;
    o.align = 8;
}

/// The uncompressed bytes of the picked sections, at their file offsets in a buffer as long as the file up to the
/// last of them: the pages before them are never touched, so they cost no memory, and the writers address it as
/// they address the output.
fn write_apart<A: Arch>(
    config: &Config,
    res: &Resolved,
    space: &SymbolSpace,
    live: &Liveness,
    lay: &Layout,
    picked: &[usize],
) -> Result<Vec<u8>> {
    let end = (picked.iter())
        .map(|&i| lay.osecs[i].offset + lay.osecs[i].size)
        .max()
        .unwrap_or(0);
    let mut bytes = vec![0u8; end as usize];
    let cx = WriteCx {
        config,
        res,
        space,
        lay,
    };
    super::write_script_fills(lay, &mut bytes, true);
    let img = Image {
        ptr: bytes.as_mut_ptr(),
        len: bytes.len(),
    };
    if let Err(mut e) = super::write_input_sections::<A>(&cx, live, img, true) {
        crate::srcloc::render(&res.objects, &mut e.0, config.error_limit);
        return Err(e);
    }
    super::write_merged_sections(lay, img, true);
    super::write_script_data(lay, &mut bytes, true);
    Ok(bytes)
}

impl Apart {
    /// Copies the sections into the output image.
    pub(super) fn write(&self, lay: &Layout, img: Image) {
        self.0.par_iter().for_each(|(i, c)| {
            let o = &lay.osecs[i.index()];
            // SAFETY: this output section's bytes are written by nothing else (`written_apart`).
            let Some(out) = (unsafe { img.slice(o.offset, o.size) }) else {
                return;
            };
            match c {
                Contents::Compressed(c) => c.write_to(out),
                Contents::Plain(v) => out.copy_from_slice(v),
            }
        });
    }
}
