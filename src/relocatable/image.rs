//! `-r`'s file image: the ELF header, the groups, each output section followed by its `.rela` section, then
//! `.symtab`, `.strtab`, `.shstrtab`, and the section headers at the end. An ELF32 architecture's (i386's) is
//! ELF32 with `.rel` sections, as GNU ld writes it: the addends go in the fields they relocate.

use super::relocs::OutRela;
use super::sections::{Made, OutSec, Plan};
use super::symbols::{Place, SymbolTable};
use crate::arch::Arch;
use crate::args::{BuildId, Config};
use crate::diag::{Errors, Result};
use crate::elf;
use crate::elf::ObjHeader as Header;
use crate::index::SecIdx;
use crate::resolve::Resolved;
use object::elf as E;
use std::collections::HashMap;

/// A string table being built, each string once.
#[derive(Default)]
struct StrTab {
    bytes: Vec<u8>,
    seen: HashMap<Vec<u8>, u32>,
}

impl StrTab {
    fn new() -> StrTab {
        StrTab {
            bytes: vec![0],
            seen: HashMap::new(),
        }
    }
    fn add(&mut self, s: &[u8]) -> u32 {
        if s.is_empty() {
            return 0;
        }
        if let Some(&at) = self.seen.get(s) {
            return at;
        }
        let at = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s);
        self.bytes.push(0);
        self.seen.insert(s.to_vec(), at);
        at
    }
}

/// The output's ELF class and the shapes of its tables.
#[derive(Clone, Copy)]
struct Class {
    elf32: bool,
}

impl Class {
    fn ehdr_size(self) -> usize {
        if self.elf32 { 52 } else { 64 }
    }
    /// Alignment of the symbol and relocation tables.
    fn word(self) -> u64 {
        if self.elf32 { 4 } else { 8 }
    }
    fn sym_size(self) -> u64 {
        if self.elf32 { 16 } else { 24 }
    }
    /// The relocation sections' prefix, type and entry size: REL for ELF32, and for the call graph profile, whose
    /// relocations only name symbols (LLVM, GNU ld and lld write REL there, and the final link reads REL).
    fn rel(self, out: &OutSec) -> (&'static [u8], u32, u64) {
        match self.rel_entries(out) {
            true if self.elf32 => (b".rel", E::SHT_REL, 8),
            true => (b".rel", E::SHT_REL, 16),
            false => (b".rela", E::SHT_RELA, 24),
        }
    }
    fn rel_entries(self, out: &OutSec) -> bool {
        self.elf32 || out.sh_type == elf::SHT_LLVM_CALL_GRAPH_PROFILE
    }
    fn shdr_bytes(self, h: &Header) -> Vec<u8> {
        if !self.elf32 {
            return h.bytes().to_vec();
        }
        let words = [
            h.name,
            h.sh_type,
            h.flags as u32,
            0,
            h.offset as u32,
            h.size as u32,
            h.link,
            h.info,
            h.align as u32,
            h.entsize as u32,
        ];
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }
}

/// Section header numbers: each output section's and its relocation section's (0: none).
struct Numbering {
    osec: Vec<u32>,
    rela: Vec<u32>,
    symtab: u32,
    count: usize,
}

fn number(plan: &Plan, relas: &[Vec<OutRela>]) -> Result<Numbering> {
    let mut next = 1 + plan.groups.len() as u32;
    let mut osec = vec![0; plan.osecs.len()];
    let mut rela = vec![0; plan.osecs.len()];
    for &id in &plan.order {
        osec[id.index()] = next;
        next += 1;
        if !relas[id.index()].is_empty() {
            rela[id.index()] = next;
            next += 1;
        }
    }
    // Beyond this, section indices need the extended numbering (`SHN_XINDEX`), which is not written yet.
    if next + 3 >= E::SHN_LORESERVE as u32 {
        return Err(Errors::one(format!(
            "relocatable output would have {} sections; more than {} are not supported yet",
            next + 3,
            E::SHN_LORESERVE - 1
        )));
    }
    Ok(Numbering {
        osec,
        rela,
        symtab: next,
        count: next as usize + 3,
    })
}

/// The whole file.
pub fn build<A: Arch>(
    config: &Config,
    res: &Resolved,
    plan: &Plan,
    syms: &SymbolTable,
    relas: &[Vec<OutRela>],
) -> Result<Vec<u8>> {
    let class = Class { elf32: A::ELF32 };
    let num = number(plan, relas)?;
    let mut shstr = StrTab::new();
    let mut image = vec![0u8; class.ehdr_size()];
    let mut headers: Vec<Header> = Vec::with_capacity(num.count);
    headers.push(header(0, 0, 0, 0, 0, 0));
    // Groups first, as GNU ld has them.
    for g in &plan.groups {
        let (mut h, words) = group(res, plan, syms, &num, g);
        h.name = shstr.add(b".group");
        place_bytes(&mut image, &mut h, &words);
        headers.push(h);
    }
    let mut build_id = None;
    for &id in &plan.order {
        let out = &plan.osecs[id.index()];
        let mut flags = out.flags;
        if !plan.groups.iter().any(|g| g.members.contains(&id)) {
            flags &= !(E::SHF_GROUP as u64);
        }
        let mut h = header(
            shstr.add(&out.name),
            out.sh_type,
            flags,
            out.align,
            out.entsize,
            0,
        );
        if let Some((f, s)) = out.link_to {
            h.link = plan.place(f, s).map_or(0, |(l, _)| num.osec[l.index()]);
        }
        h.size = out.size;
        if out.sh_type == E::SHT_NOBITS {
            h.offset = elf::align_up(image.len() as u64, out.align);
        } else {
            let mut bytes = contents::<A>(res, out);
            if class.elf32 {
                implicit_addends::<A>(&mut bytes, out, &relas[id.index()])?;
            }
            if let Some(how) = config.compress_debug
                && crate::compress::compressible(&out.name, flags, out.sh_type)
                && let Some(c) = crate::compress::compress(&bytes, how, out.align)
            {
                // As in a final link (`write::compress_debug`); the relocations still count in the uncompressed
                // bytes, as the gABI has them.
                bytes = c.into_bytes();
                h.flags |= E::SHF_COMPRESSED as u64;
                h.align = 8;
            }
            if let Made::BuildId(n) = out.made {
                build_id = Some((elf::align_up(image.len() as u64, out.align) as usize, n));
            }
            place_bytes(&mut image, &mut h, &bytes);
        }
        headers.push(h);
        let list = &relas[id.index()];
        if !list.is_empty() {
            let (prefix, sh_type, entsize) = class.rel(out);
            let name = [prefix, &out.name[..]].concat();
            let mut r = header(
                shstr.add(&name),
                sh_type,
                E::SHF_INFO_LINK as u64,
                class.word(),
                entsize,
                0,
            );
            r.flags |= flags & E::SHF_GROUP as u64;
            r.link = num.symtab;
            r.info = num.osec[id.index()];
            let bytes = rela_bytes(list, class.elf32, class.rel_entries(out));
            place_bytes(&mut image, &mut r, &bytes);
            headers.push(r);
        }
    }
    let (symtab, strtab) = symtab_bytes(syms, &num, class, config.unique_symbol);
    let mut h = header(
        shstr.add(b".symtab"),
        E::SHT_SYMTAB,
        0,
        class.word(),
        class.sym_size(),
        0,
    );
    h.link = num.symtab + 1;
    h.info = syms.first_global as u32;
    place_bytes(&mut image, &mut h, &symtab);
    headers.push(h);
    let mut h = header(shstr.add(b".strtab"), E::SHT_STRTAB, 0, 1, 0, 0);
    place_bytes(&mut image, &mut h, &strtab);
    headers.push(h);
    let mut h = header(shstr.add(b".shstrtab"), E::SHT_STRTAB, 0, 1, 0, 0);
    let names = std::mem::take(&mut shstr.bytes);
    place_bytes(&mut image, &mut h, &names);
    headers.push(h);
    let shoff = elf::align_up(image.len() as u64, class.word());
    image.resize(shoff as usize, 0);
    for h in &headers {
        image.extend_from_slice(&class.shdr_bytes(h));
    }
    if class.elf32 && image.len() > u32::MAX as usize {
        return Err(Errors::one(format!(
            "relocatable output of {} bytes is too large for ELF32",
            image.len()
        )));
    }
    let entry = entry_value(config, res, syms);
    write_ehdr(
        &mut image,
        res,
        A::E_MACHINE,
        entry,
        (shoff, headers.len()),
        class,
    );
    if let Some((at, n)) = build_id {
        fill_build_id(config, &mut image, at, n);
    }
    Ok(image)
}

fn header(name: u32, sh_type: u32, flags: u64, align: u64, entsize: u64, size: u64) -> Header {
    Header {
        name,
        sh_type,
        flags,
        offset: 0,
        size,
        link: 0,
        info: 0,
        align,
        entsize,
    }
}

/// Appends `bytes` at `h`'s alignment and records where.
fn place_bytes(image: &mut Vec<u8>, h: &mut Header, bytes: &[u8]) {
    let at = elf::align_up(image.len() as u64, h.align.max(1));
    image.resize(at as usize, 0);
    image.extend_from_slice(bytes);
    h.offset = at;
    h.size = bytes.len() as u64;
}

/// An output section's bytes: its input sections at their offsets (zeros for `.bss`-like inputs, and between
/// them but in code, which gets the architecture's no-ops there as in a final link and GNU ld's `-r`), or what
/// the linker makes.
fn contents<A: Arch>(res: &Resolved, out: &OutSec) -> Vec<u8> {
    let mut bytes = vec![0u8; out.size as usize];
    match &out.made {
        Made::Properties(props) => crate::synthetic::property::write(&mut bytes, props),
        Made::BuildId(n) => {
            bytes[0..4].copy_from_slice(&4u32.to_le_bytes());
            bytes[4..8].copy_from_slice(&(*n as u32).to_le_bytes());
            bytes[8..12].copy_from_slice(&E::NT_GNU_BUILD_ID.to_le_bytes());
            bytes[12..16].copy_from_slice(b"GNU\0");
        }
        Made::Inputs | Made::Package(..) => {
            let code = out.flags & E::SHF_EXECINSTR as u64 != 0;
            let mut end = 0;
            for p in &out.parts {
                let o = &res.objects[p.file.index()];
                let sec = o.sec(p.sec);
                let data = match sec.data() {
                    // Sections the final link ignores (SHF_EXCLUDE, `.gnu.warning`) are only read here.
                    [] if sec.sh_type() != E::SHT_NOBITS => {
                        elf::section_data(o.data, sec.shdr).unwrap_or(&[])
                    }
                    d => d,
                };
                let at = p.offset as usize;
                if code && at > end {
                    A::fill_code(&mut bytes[end..at]);
                }
                bytes[at..at + data.len()].copy_from_slice(data);
                end = end.max(at + sec.size() as usize);
            }
            if let Made::Package(json, at) = &out.made {
                crate::synthetic::notes::write_package(&mut bytes[*at as usize..], json);
            }
        }
    }
    bytes
}

/// ELF32 (REL): writes into an output section's bytes the addends its relocations moved (those against section
/// symbols of input sections not at its start), as GNU ld's `-r` does; an addend the field cannot hold is an
/// error.
fn implicit_addends<A: Arch>(bytes: &mut [u8], out: &OutSec, list: &[OutRela]) -> Result<()> {
    for r in list.iter().filter(|r| r.moved) {
        A::write_value(bytes, r.offset as usize, r.r_type, r.addend as u64).map_err(|e| {
            let why = match e {
                crate::arch::WriteErr::Overflow => format!("addend {:#x} does not fit", r.addend),
                crate::arch::WriteErr::Range => "its field lies outside the section".to_string(),
            };
            Errors::one(format!(
                "section {}+{:#x}: relocation {}: {why}",
                String::from_utf8_lossy(&out.name),
                r.offset,
                A::type_name(r.r_type)
            ))
        })?;
    }
    Ok(())
}

/// The relocation entries: ELF32's (always REL) or ELF64's, REL (`rel`: no addend) or RELA.
fn rela_bytes(list: &[OutRela], elf32: bool, rel: bool) -> Vec<u8> {
    let mut v = Vec::with_capacity(list.len() * 24);
    for r in list {
        if elf32 {
            v.extend_from_slice(&(r.offset as u32).to_le_bytes());
            v.extend_from_slice(&((r.sym << 8) | (r.r_type & 0xff)).to_le_bytes());
            continue;
        }
        v.extend_from_slice(&r.offset.to_le_bytes());
        v.extend_from_slice(&((u64::from(r.sym) << 32) | u64::from(r.r_type)).to_le_bytes());
        if !rel {
            v.extend_from_slice(&r.addend.to_le_bytes());
        }
    }
    v
}

/// A group section's header and words: its flags, then its members' (and their relocations') indices; the
/// signature's symbol in `sh_info`.
fn group(
    res: &Resolved,
    plan: &Plan,
    syms: &SymbolTable,
    num: &Numbering,
    g: &super::sections::Group,
) -> (Header, Vec<u8>) {
    let mut words = g.flag.to_le_bytes().to_vec();
    for m in &g.members {
        words.extend_from_slice(&num.osec[m.index()].to_le_bytes());
        if num.rela[m.index()] != 0 {
            words.extend_from_slice(&num.rela[m.index()].to_le_bytes());
        }
    }
    let mut h = header(0, E::SHT_GROUP, 0, 4, 4, 0);
    h.link = num.symtab;
    h.info = signature(res, plan, syms, g);
    (h, words)
}

/// The group's signature: its symbol's output index (a section symbol's is its output section's).
fn signature(res: &Resolved, plan: &Plan, syms: &SymbolTable, g: &super::sections::Group) -> u32 {
    let (f, i) = (g.file, g.sig_sym as usize);
    let o = &res.objects[f.index()];
    if i >= o.first_global {
        return res.object_ids[f.index()]
            .get(i - o.first_global)
            .map_or(0, |id| syms.global_index[id.index()]);
    }
    if o.syms[i].st_type() == E::STT_SECTION {
        return plan
            .place(f, SecIdx(o.sym_shndx(i)))
            .map_or(0, |(id, _)| syms.section_sym[id.index()]);
    }
    syms.local_index[f.index()][i]
}

/// `.symtab` and `.strtab`; with `unique` (`-z unique-symbol`), each local but file and section symbols named
/// with `.N` appended, N counting the locals of that name before it.
fn symtab_bytes(
    syms: &SymbolTable,
    num: &Numbering,
    class: Class,
    unique: bool,
) -> (Vec<u8>, Vec<u8>) {
    let mut strtab = StrTab::new();
    let mut seen: std::collections::HashMap<&[u8], u32> = std::collections::HashMap::new();
    let mut v = Vec::with_capacity(syms.syms.len() * class.sym_size() as usize);
    for s in &syms.syms {
        let shndx: u16 = match s.place {
            Place::Undef => 0,
            Place::Abs => E::SHN_ABS,
            Place::Common => E::SHN_COMMON,
            Place::Sec(id) => num.osec[id.index()] as u16,
            Place::Group(g) => 1 + g as u16,
        };
        let renamed = (unique
            && !s.name.is_empty()
            && s.info >> 4 == E::STB_LOCAL
            && !matches!(s.info & 0xf, E::STT_FILE | E::STT_SECTION))
        .then(|| {
            let n = seen.entry(s.name).or_insert(0);
            *n += 1;
            [s.name, format!(".{}", *n - 1).as_bytes()].concat()
        });
        v.extend_from_slice(
            &strtab
                .add(renamed.as_deref().unwrap_or(s.name))
                .to_le_bytes(),
        );
        if class.elf32 {
            v.extend_from_slice(&(s.value as u32).to_le_bytes());
            v.extend_from_slice(&(s.size as u32).to_le_bytes());
        }
        v.push(s.info);
        v.push(s.other);
        v.extend_from_slice(&shndx.to_le_bytes());
        if !class.elf32 {
            v.extend_from_slice(&s.value.to_le_bytes());
            v.extend_from_slice(&s.size.to_le_bytes());
        }
    }
    (v, strtab.bytes)
}

/// `-e SYM`: the symbol's value (section-relative, as GNU ld writes it), else 0.
fn entry_value(config: &Config, res: &Resolved, syms: &SymbolTable) -> u64 {
    let Some(name) = &config.entry else { return 0 };
    res.names
        .lookup(name.as_bytes())
        .map(|g| syms.global_index[g.index()])
        .and_then(|i| syms.syms.get(i as usize))
        .filter(|s| s.place != Place::Undef)
        .map_or(0, |s| s.value)
}

/// `e_ident[EI_OSABI]`.
const OSABI: usize = 7;

fn write_ehdr(
    image: &mut [u8],
    res: &Resolved,
    machine: u16,
    entry: u64,
    (shoff, shnum): (u64, usize),
    class: Class,
) {
    // The GNU OS/ABI when an input has it (`STB_GNU_UNIQUE`, IFUNCs), as GNU ld carries it.
    let osabi = res
        .objects
        .iter()
        .zip(&res.object_live)
        .filter(|(_, l)| **l)
        .filter_map(|(o, _)| o.data.get(OSABI).copied())
        .find(|&a| a != 0)
        .unwrap_or(0);
    let h = &mut image[..class.ehdr_size()];
    h[0..4].copy_from_slice(&E::ELFMAG);
    h[4] = if class.elf32 {
        E::ELFCLASS32
    } else {
        E::ELFCLASS64
    };
    h[5] = E::ELFDATA2LSB;
    h[6] = E::EV_CURRENT;
    h[OSABI] = osabi;
    h[16..18].copy_from_slice(&E::ET_REL.to_le_bytes());
    h[18..20].copy_from_slice(&machine.to_le_bytes());
    h[20..24].copy_from_slice(&u32::from(E::EV_CURRENT).to_le_bytes());
    // No program headers: e_phoff, e_phentsize and e_phnum stay 0.
    let (ehsize, shentsize) = (
        class.ehdr_size() as u16,
        if class.elf32 { 40u16 } else { 64 },
    );
    let tail = if class.elf32 {
        h[24..28].copy_from_slice(&(entry as u32).to_le_bytes());
        h[32..36].copy_from_slice(&(shoff as u32).to_le_bytes());
        40
    } else {
        h[24..32].copy_from_slice(&entry.to_le_bytes());
        h[40..48].copy_from_slice(&shoff.to_le_bytes());
        52
    };
    // e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx after e_flags.
    h[tail..tail + 2].copy_from_slice(&ehsize.to_le_bytes());
    h[tail + 6..tail + 8].copy_from_slice(&shentsize.to_le_bytes());
    h[tail + 8..tail + 10].copy_from_slice(&(shnum as u16).to_le_bytes());
    h[tail + 10..tail + 12].copy_from_slice(&((shnum - 1) as u16).to_le_bytes());
}

/// `--build-id`: the note's descriptor, a digest of the whole image with the descriptor still zero (or the
/// given bytes, or a random UUID).
fn fill_build_id(config: &Config, image: &mut [u8], at: usize, n: usize) {
    let id: Vec<u8> = match &config.build_id {
        BuildId::Hex(h) => h.clone(),
        BuildId::Uuid => {
            let mut v = vec![0u8; 16];
            if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
                use std::io::Read;
                let _ = f.read_exact(&mut v);
            }
            v[6] = (v[6] & 0x0f) | 0x40;
            v[8] = (v[8] & 0x3f) | 0x80;
            v
        }
        _ => blake3::hash(image).as_bytes().to_vec(),
    };
    image[at + 16..at + 16 + n].copy_from_slice(&id[..n]);
}
