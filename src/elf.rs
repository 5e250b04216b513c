//! Checked, zero-copy reading of ELF64 little-endian files on top of the `object` crate's definitions.
//!
//! Every offset, size and index read from a file goes through a checked accessor here, so that a truncated or
//! corrupt input becomes an error message rather than a panic. Parsed structures borrow from the input mapping,
//! which lives for the whole link (`'static`: mappings are deliberately never unmapped, see `input`).

use object::elf::{self, FileHeader64, Rela64, SectionHeader64, Sym64};
use object::{LittleEndian, pod};

pub type LE = LittleEndian;
pub const LE: LE = LittleEndian;
pub type Ehdr = FileHeader64<LE>;
pub type Shdr = SectionHeader64<LE>;
pub type Sym = Sym64<LE>;
pub type Rela = Rela64<LE>;

/// Dynamic tags for packed relative relocations (`object` 0.36 names SHT_RELR but not these).
pub const DT_RELRSZ: u64 = 35;
pub const DT_RELR: u64 = 36;
pub const DT_RELRENT: u64 = 37;

/// `SHT_LLVM_CALL_GRAPH_PROFILE`: a weight (8 bytes) per call graph edge, whose caller and callee symbols are the
/// two `SHT_REL` relocations of the edge's entry.
pub const SHT_LLVM_CALL_GRAPH_PROFILE: u32 = 0x6fff_4c09;

pub type Dyn = object::elf::Dyn64<LE>;

/// Asks the CPU to start loading the cache line at `p`: a hint for loops whose next iterations read scattered
/// memory. It never faults, whatever the address.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints; it reads nothing architecturally and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Prefetches the start of `v`, a cache line at a time, up to `PREFETCH_SLICE_MAX` bytes (more would evict its own
/// start before it is used).
pub fn prefetch_slice<T>(v: &[T]) {
    const LINE: usize = 64;
    const PREFETCH_SLICE_MAX: usize = 256 << 10;
    let bytes = std::mem::size_of_val(v).min(PREFETCH_SLICE_MAX);
    let p = v.as_ptr() as *const u8;
    for off in (0..bytes).step_by(LINE) {
        prefetch(p.wrapping_add(off));
    }
}

pub type Data = &'static [u8];

/// The machine of the link (`e_machine`) and its name for messages, set once before any input is read
/// (`set_target`): inputs are parsed in many places, archive members deep inside symbol resolution, and each
/// must be of the link's machine.
static TARGET: std::sync::OnceLock<(u16, &'static str)> = std::sync::OnceLock::new();

/// Sets the machine every input must be of (the architecture's `E_MACHINE` and name).
pub fn set_target(machine: u16, name: &'static str) {
    let _ = TARGET.set((machine, name));
}

/// A section header of a relocatable object rivet writes (`-r`'s output, `-b binary`'s object): `sh_addr` is 0.
pub struct ObjHeader {
    pub name: u32,
    pub sh_type: u32,
    pub flags: u64,
    pub offset: u64,
    pub size: u64,
    pub link: u32,
    pub info: u32,
    pub align: u64,
    pub entsize: u64,
}

impl ObjHeader {
    /// The ELF64 header's bytes.
    pub fn bytes(&self) -> [u8; 64] {
        let mut b = [0u8; 64];
        b[0..4].copy_from_slice(&self.name.to_le_bytes());
        b[4..8].copy_from_slice(&self.sh_type.to_le_bytes());
        b[8..16].copy_from_slice(&self.flags.to_le_bytes());
        b[24..32].copy_from_slice(&self.offset.to_le_bytes());
        b[32..40].copy_from_slice(&self.size.to_le_bytes());
        b[40..44].copy_from_slice(&self.link.to_le_bytes());
        b[44..48].copy_from_slice(&self.info.to_le_bytes());
        b[48..56].copy_from_slice(&self.align.to_le_bytes());
        b[56..64].copy_from_slice(&self.entsize.to_le_bytes());
        b
    }
}

/// The link's machine (`e_machine`).
pub fn target_machine() -> u16 {
    TARGET.get().map_or(0, |t| t.0)
}

/// The implicit addend of a REL relocation (`Arch::rel_addend`), which widening an ELF32 input reads.
pub type AddendFn = fn(r_type: u32, field: &[u8]) -> Option<i64>;

/// Set for a link of an ELF32 architecture, once, before any input is read: its inputs are widened as they are
/// parsed (`elf32::widen`) and its output narrowed.
static ELF32: std::sync::OnceLock<AddendFn> = std::sync::OnceLock::new();

/// Makes the link an ELF32 one, whose REL addends `addend` reads.
pub fn set_elf32(addend: AddendFn) {
    let _ = ELF32.set(addend);
}

/// The ELF32 link's addend reader, `None` in an ELF64 link.
pub fn elf32_addend() -> Option<AddendFn> {
    ELF32.get().copied()
}

/// The size of the ELF header and `nphdr` program headers in the output's class (`SIZEOF_HEADERS`).
pub fn headers_size(nphdr: usize) -> u64 {
    match ELF32.get() {
        None => 64 + 56 * nphdr as u64,
        Some(_) => 52 + 32 * nphdr as u64,
    }
}

/// The size of one section header in the output's class.
pub fn shdr_size() -> u64 {
    if ELF32.get().is_some() { 40 } else { 64 }
}

/// The alignment of the output's headers and address-sized words.
pub fn word_align() -> u64 {
    if ELF32.get().is_some() { 4 } else { 8 }
}

/// The size of one program header in the output's class.
pub fn phdr_size() -> u64 {
    if ELF32.get().is_some() { 32 } else { 56 }
}

/// Checks the ELF identification and machine, and returns the file header.
pub fn file_header(data: Data) -> Result<&'static Ehdr, String> {
    let (eh, _) = pod::from_bytes::<Ehdr>(data)
        .map_err(|_| "file is too short for an ELF header".to_string())?;
    if eh.e_ident.magic != elf::ELFMAG {
        return Err("not an ELF file".into());
    }
    if eh.e_ident.class != elf::ELFCLASS64 || eh.e_ident.data != elf::ELFDATA2LSB {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let machine = eh.e_machine.get(LE);
    let &(expected, name) = TARGET.get().expect("the link's machine is set first");
    if machine != expected {
        return Err(format!(
            "incompatible machine type {machine} (expected {name})"
        ));
    }
    Ok(eh)
}

/// The range of addresses (start, end) a shared object's `PT_GNU_RELRO` makes read-only after relocation, if it
/// has one and its program header table is readable.
pub fn relro_range(data: Data, eh: &Ehdr) -> Option<(u64, u64)> {
    type Phdr = object::elf::ProgramHeader64<LE>;
    if eh.e_phentsize.get(LE) as usize != size_of::<Phdr>() {
        return None;
    }
    let n = eh.e_phnum.get(LE) as u64;
    let bytes = slice(data, eh.e_phoff.get(LE), n * size_of::<Phdr>() as u64)?;
    let phdrs = pod::slice_from_all_bytes::<Phdr>(bytes).ok()?;
    let p = phdrs
        .iter()
        .find(|p| p.p_type.get(LE) == elf::PT_GNU_RELRO)?;
    let start = p.p_vaddr.get(LE);
    Some((start, start.checked_add(p.p_memsz.get(LE))?))
}

/// The section header table, with the extended section count (`e_shnum == 0`) handled.
pub fn section_headers(data: Data, eh: &Ehdr) -> Result<&'static [Shdr], String> {
    let off = eh.e_shoff.get(LE);
    if off == 0 {
        return Ok(&[]);
    }
    if eh.e_shentsize.get(LE) as usize != size_of::<Shdr>() {
        return Err("invalid section header entry size".into());
    }
    let rest = slice(data, off, size_of::<Shdr>() as u64)
        .ok_or("section header table is out of bounds")?;
    let (first, _) =
        pod::from_bytes::<Shdr>(rest).map_err(|_| "section header table is out of bounds")?;
    let mut num = eh.e_shnum.get(LE) as u64;
    if num == 0 {
        num = first.sh_size.get(LE);
    }
    let bytes = slice(
        data,
        off,
        num.checked_mul(size_of::<Shdr>() as u64)
            .ok_or("section count overflows")?,
    )
    .ok_or("section header table is out of bounds")?;
    pod::slice_from_all_bytes::<Shdr>(bytes)
        .map_err(|_| "section header table is misaligned".to_string())
}

/// The index of the section-name string table, with `SHN_XINDEX` handled.
pub fn shstrndx(eh: &Ehdr, shdrs: &[Shdr]) -> usize {
    let i = eh.e_shstrndx.get(LE);
    if i == elf::SHN_XINDEX {
        shdrs.first().map_or(0, |s| s.sh_link.get(LE) as usize)
    } else {
        i as usize
    }
}

/// `len` bytes at `off`, or `None` if that range is outside `data`.
#[inline]
pub fn slice(data: Data, off: u64, len: u64) -> Option<Data> {
    let end = off.checked_add(len)?;
    if end > data.len() as u64 {
        return None;
    }
    Some(&data[off as usize..end as usize])
}

/// The bytes of a section in the file (empty for `SHT_NOBITS`).
pub fn section_data(data: Data, sh: &Shdr) -> Result<Data, String> {
    if sh.sh_type.get(LE) == elf::SHT_NOBITS {
        return Ok(&[]);
    }
    slice(data, sh.sh_offset.get(LE), sh.sh_size.get(LE))
        .ok_or_else(|| "section data is out of bounds".to_string())
}

/// A NUL-terminated string at `off` in a string table.
#[inline]
pub fn cstr(strtab: Data, off: u32) -> Result<Data, String> {
    let rest = strtab
        .get(off as usize..)
        .ok_or("string table offset is out of bounds")?;
    let len = memchr0(rest).ok_or("unterminated string in string table")?;
    Ok(&rest[..len])
}

/// [`cstr`], and where the string's first '@' is (a symbol version), found in the same pass.
pub fn cstr_at(strtab: Data, off: u32) -> Result<(Data, Option<usize>), String> {
    let rest = strtab
        .get(off as usize..)
        .ok_or("string table offset is out of bounds")?;
    let unterminated = "unterminated string in string table";
    let stop = memchr::memchr2(0, b'@', rest).ok_or(unterminated)?;
    if rest[stop] == 0 {
        return Ok((&rest[..stop], None));
    }
    let len = stop + memchr0(&rest[stop..]).ok_or(unterminated)?;
    Ok((&rest[..len], Some(stop)))
}

/// The index of the first NUL. The `memchr` crate's vectorised search: a byte loop here was 63% of parsing
/// sections on clang-so, whose section and symbol names are long mangled C++ names.
#[inline]
pub fn memchr0(s: &[u8]) -> Option<usize> {
    memchr::memchr(0, s)
}

/// Reinterprets a section's bytes as a table of `T` (symbols, relocations, dynamic entries).
pub fn table<T: pod::Pod>(data: Data, sh: &Shdr, what: &str) -> Result<&'static [T], String> {
    let bytes = section_data(data, sh)?;
    if bytes.len() % size_of::<T>() != 0 {
        return Err(format!(
            "{what} table size is not a multiple of its entry size"
        ));
    }
    pod::slice_from_all_bytes::<T>(bytes).map_err(|_| format!("{what} table is misaligned"))
}

#[inline]
pub fn read_u32(buf: &[u8], off: usize) -> Option<u32> {
    buf.get(off..off + 4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
}

#[inline]
pub fn read_u64(buf: &[u8], off: usize) -> Option<u64> {
    buf.get(off..off + 8)
        .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
}

/// The GNU hash function for `.gnu.hash`.
pub fn gnu_hash(name: &[u8]) -> u32 {
    // h = h * 33 + c, four bytes per step: h * 33^4 + (c0 * 33^3 + c1 * 33^2 + c2 * 33 + c3). The byte terms do
    // not depend on h, so the serial chain is one multiply-add per four bytes instead of per byte (dynamic
    // symbol names of C++ libraries average ~90 bytes, and a large library has tens of thousands of them).
    const P1: u32 = 33;
    const P2: u32 = 33 * 33;
    const P3: u32 = 33 * 33 * 33;
    const P4: u32 = P3.wrapping_mul(33);
    let mut h = 5381u32;
    let mut chunks = name.chunks_exact(4);
    for c in &mut chunks {
        let t = (c[0] as u32)
            .wrapping_mul(P3)
            .wrapping_add((c[1] as u32).wrapping_mul(P2))
            .wrapping_add((c[2] as u32).wrapping_mul(P1))
            .wrapping_add(c[3] as u32);
        h = h.wrapping_mul(P4).wrapping_add(t);
    }
    chunks
        .remainder()
        .iter()
        .fold(h, |h, &c| h.wrapping_mul(33).wrapping_add(c as u32))
}

/// The System V hash function for `.hash`.
pub fn sysv_hash(name: &[u8]) -> u32 {
    let mut h: u32 = 0;
    for &c in name {
        h = (h << 4).wrapping_add(c as u32);
        let g = h & 0xf000_0000;
        if g != 0 {
            h ^= g >> 24;
        }
        h &= !g;
    }
    h
}

pub fn align_up(v: u64, align: u64) -> u64 {
    if align <= 1 {
        v
    } else {
        // Saturating: sizes and addresses from the inputs may be near 2^64, and the layout reports a section
        // that ends past the address space (`segments`) rather than wrapping around.
        v.div_ceil(align).saturating_mul(align)
    }
}

/// A program header of the output, in native form.
pub struct Segment {
    pub p_type: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    /// The load address (`AT` in a linker script); the address elsewhere.
    pub paddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

pub const NT_GNU_PROPERTY_TYPE_0: u32 = 5;

/// The 4-byte properties of a `.note.gnu.property` section's notes; other properties (sizes, flags without
/// data) are skipped.
pub fn note_properties(d: &[u8]) -> std::result::Result<Vec<(u32, u32)>, String> {
    let word = |at: usize| {
        d.get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .ok_or_else(|| format!("truncated note at offset {at:#x}"))
    };
    let mut props = Vec::new();
    let mut at = 0;
    while at < d.len() {
        let (namesz, descsz, ty) = (word(at)? as usize, word(at + 4)? as usize, word(at + 8)?);
        let desc = at + 12 + namesz.next_multiple_of(4);
        let end = desc
            .checked_add(descsz)
            .filter(|&e| e <= d.len())
            .ok_or_else(|| format!("note at offset {at:#x} extends past the section"))?;
        if ty == NT_GNU_PROPERTY_TYPE_0 && d.get(at + 12..at + 12 + namesz) == Some(b"GNU\0") {
            let mut p = desc;
            while p < end {
                let (pr_type, size) = (word(p)?, word(p + 4)? as usize);
                let data = p + 8;
                if data.checked_add(size).is_none_or(|e| e > end) {
                    return Err(format!("property {pr_type:#x} extends past its note"));
                }
                if size == 4 {
                    props.push((pr_type, word(data)?));
                }
                p = data + size.next_multiple_of(8);
            }
        }
        at = end.next_multiple_of(8);
    }
    Ok(props)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_the_abi_examples() {
        assert_eq!(gnu_hash(b""), 0x1505);
        assert_eq!(gnu_hash(b"printf"), 0x156b2bb8);
        // Every length around the four-byte steps agrees with the byte-at-a-time definition.
        let text = b"_ZNSt6vectorIiSaIiEE9push_backERKi_and_some_more";
        for n in 0..text.len() {
            let slow = text[..n]
                .iter()
                .fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(c as u32));
            assert_eq!(gnu_hash(&text[..n]), slow, "length {n}");
        }
        assert_eq!(sysv_hash(b"printf"), 0x077905a6);
    }

    #[test]
    fn truncated_header_is_an_error() {
        assert!(file_header(b"\x7fELF\x02\x01").is_err());
        assert!(file_header(b"hello world").is_err());
    }
}
