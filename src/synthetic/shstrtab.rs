//! `.shstrtab`: the section header string table, sized and written here from the same list, the names of the
//! sections that have a header in output section order (`Layout::osecs`, which is also the order the section
//! headers take their names in; with `--emit-relocs` the headers are numbered in another order, each `.rela`
//! section after its section, but each header finds its name by `name_offsets`). A NUL, then each name with its NUL.

/// The size of `.shstrtab` for `names`.
pub fn size<'a>(names: impl Iterator<Item = &'a [u8]>) -> u64 {
    1 + names.map(|n| n.len() as u64 + 1).sum::<u64>()
}

/// Each name's offset in `.shstrtab`, in `names`' order.
pub fn name_offsets<'a>(names: impl Iterator<Item = &'a [u8]>) -> impl Iterator<Item = u32> {
    names.scan(1u32, |off, n| {
        let at = *off;
        *off += n.len() as u32 + 1;
        Some(at)
    })
}

/// Writes `.shstrtab` (`out` is `size(names)` bytes).
pub fn write<'a>(out: &mut [u8], names: impl Iterator<Item = &'a [u8]>) {
    out[0] = 0;
    let mut off = 1;
    for n in names {
        out[off..off + n.len()].copy_from_slice(n);
        out[off + n.len()] = 0;
        off += n.len() + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_offsets_agree() {
        let names: [&[u8]; 3] = [b".text", b"", b".data"];
        let n = size(names.into_iter()) as usize;
        let mut out = vec![0xffu8; n];
        write(&mut out, names.into_iter());
        assert_eq!(out, b"\0.text\0\0.data\0");
        let offs: Vec<u32> = name_offsets(names.into_iter()).collect();
        assert_eq!(offs, [1, 7, 8]);
    }
}
