//! Dynamic relocation entries (`Elf64_Rela`), as `.rela.dyn`, `.rela.plt` and `.rela.iplt` hold them: the GOT and
//! PLT writer's (`got_plt`) and the input sections' (written while their relocations are applied).

/// A dynamic relocation to be written into `.rela.dyn`, `.rela.plt` or `.rela.iplt`.
#[derive(Clone, Copy)]
pub struct DynRel {
    pub offset: u64,
    pub r_type: u32,
    pub sym: u32,
    pub addend: i64,
}

/// Writes `r` into the first 24 bytes of `out`.
#[inline]
pub fn put(out: &mut [u8], r: &DynRel) {
    out[0..8].copy_from_slice(&r.offset.to_le_bytes());
    out[8..16].copy_from_slice(&((r.sym as u64) << 32 | r.r_type as u64).to_le_bytes());
    out[16..24].copy_from_slice(&r.addend.to_le_bytes());
}
