//! Linker-made sections: which exist (`Synth`, and where each went, `SynthMap`), the entries of the dynamic symbol
//! table (`DynSymbol`), and one module per section or family whose size and bytes come from the same data:
//! `dynamic`, `dynsym` (`.dynsym`, `.dynstr`), `gdb_index` (`.gdb_index`'s format), `hash` (`.hash`, `.gnu.hash`), `versions` (`.gnu.version`, `.gnu.version_d`, `.gnu.version_r`),
//! `notes` (`.note.package`, the build id note's header), `property` (`.note.gnu.property`), `interp`, `got_plt`
//! (`.got`, `.got.plt`, `.plt`, `.iplt` and their slots' dynamic relocations), `rela` (a dynamic relocation
//! entry), `relr` (`.relr.dyn`'s encoding), `shstrtab`, `eh_frame_hdr` and `symtab` (`.symtab`, `.strtab`, and
//! which symbols they hold).
//!
//! A module here depends on no pass after resolution: layout builds its data, the writer writes it, each through
//! the module. What only a later pass knows comes in as plain data (slices, the module's own structs) or, where a
//! loop over symbols asks where each one went, through a small trait the writer implements over the layout
//! (`got_plt::Lookup`, `symtab::Places`, `dynsym::Places`; generic, so that the loop is monomorphised). Which
//! symbols are dynamic, their order and `.dynstr`'s strings are the layout's dynamic symbol pass's choice
//! (`layout::dynsym`); the build id's digest is the writer's (it hashes the finished output).

use crate::index::{OsecId, SymId};

pub mod dynamic;
pub mod dynsym;
pub mod eh_frame_hdr;
pub mod gdb_index;
pub mod got_plt;
pub mod hash;
pub mod interp;
pub mod notes;
pub mod property;
pub mod rela;
pub mod relr;
pub mod shstrtab;
pub mod symtab;
pub mod versions;

/// The linker-made sections, each with its section's name (its output section's by default, the input section
/// name a script's statements match), listed once: the enum, `Synth::ALL` and `Synth::name` come from the list.
macro_rules! linker_made {
    ($($s:ident => $name:literal,)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Synth {
            $($s,)*
        }

        impl Synth {
            /// Every one, in order (`Synth::ALL[s as usize] == s`).
            pub const ALL: &'static [Synth] = &[$(Synth::$s,)*];

            /// Its section's name.
            pub fn name(self) -> &'static [u8] {
                match self {
                    $(Synth::$s => $name,)*
                }
            }
        }
    };
}

linker_made! {
    Interp => b".interp",
    GnuProperty => b".note.gnu.property",
    BuildId => b".note.gnu.build-id",
    PackageNote => b".note.package",
    Hash => b".hash",
    GnuHash => b".gnu.hash",
    Dynsym => b".dynsym",
    Dynstr => b".dynstr",
    Versym => b".gnu.version",
    Verdef => b".gnu.version_d",
    Verneed => b".gnu.version_r",
    RelaDyn => b".rela.dyn",
    RelaPlt => b".rela.plt",
    RelaIplt => b".rela.iplt",
    // The input sections' dynamic relocations a script places apart from `.rela.dyn` (`layout::named_relocs`).
    RelaNamed => b".rela.named",
    RelrDyn => b".relr.dyn",
    Plt => b".plt",
    Iplt => b".iplt",
    Got => b".got",
    GotPlt => b".got.plt",
    Dynamic => b".dynamic",
    EhFrameHdr => b".eh_frame_hdr",
    Symtab => b".symtab",
    Strtab => b".strtab",
    Shstrtab => b".shstrtab",
    GdbIndex => b".gdb_index",
}

impl Synth {
    const COUNT: usize = Synth::ALL.len();
}

/// Where each linker-made section is: its output section (`NONE` where there is none), its alignment, and once
/// the layout has sized and placed it, its size and its offset in that output section, which a script may share
/// with inputs, data commands or other linker-made sections (GNU ld's scripts put `.iplt` in `.plt`,
/// `.rela.iplt` in `.rela.plt`). Arrays, as the writer asks for `.got` and `.plt` addresses per relocation (a
/// hash lookup there was 1.4% of clang-so's profile).
#[derive(Clone, Copy, Debug)]
pub struct SynthMap {
    osec: [OsecId; Synth::COUNT],
    align: [u64; Synth::COUNT],
    size: [u64; Synth::COUNT],
    offset: [u64; Synth::COUNT],
}

impl Default for SynthMap {
    fn default() -> Self {
        SynthMap {
            osec: [OsecId::NONE; Synth::COUNT],
            align: [1; Synth::COUNT],
            size: [0; Synth::COUNT],
            offset: [0; Synth::COUNT],
        }
    }
}

impl std::ops::Index<Synth> for SynthMap {
    type Output = OsecId;
    /// The output section of a linker-made section the layout has made.
    fn index(&self, s: Synth) -> &OsecId {
        let i = &self.osec[s as usize];
        assert!(i.is_some(), "no {s:?} section");
        i
    }
}

impl SynthMap {
    #[inline]
    pub fn get(&self, s: Synth) -> Option<OsecId> {
        self.osec[s as usize].get()
    }
    pub fn insert(&mut self, s: Synth, i: OsecId, align: u64) {
        self.osec[s as usize] = i;
        self.align[s as usize] = align;
    }
    pub fn align(&self, s: Synth) -> u64 {
        self.align[s as usize]
    }
    /// The size of its contents.
    #[inline]
    pub fn size(&self, s: Synth) -> u64 {
        self.size[s as usize]
    }
    pub fn set_size(&mut self, s: Synth, size: u64) {
        self.size[s as usize] = size;
    }
    /// Its offset in its output section.
    #[inline]
    pub fn offset(&self, s: Synth) -> u64 {
        self.offset[s as usize]
    }
    pub fn set_offset(&mut self, s: Synth, offset: u64) {
        self.offset[s as usize] = offset;
    }
    /// The output sections of the linker-made sections present, but for `skip`'s.
    pub fn sections_but(&self, skip: Synth) -> impl Iterator<Item = OsecId> + '_ {
        (self.osec.iter().enumerate())
            .filter(move |&(k, &i)| k != skip as usize && i.is_some())
            .map(|(_, &i)| i)
    }
    /// The same sections, renumbered.
    pub fn remap(&self, to: &[OsecId]) -> SynthMap {
        SynthMap {
            osec: self.osec.map(|i| {
                if i.is_none() {
                    OsecId::NONE
                } else {
                    to[i.index()]
                }
            }),
            ..*self
        }
    }
}

/// An entry of `.dynsym`.
#[derive(Clone, Copy)]
pub struct DynSymbol {
    /// The symbol; `NONE` for a version node's absolute symbol (its name is the version's).
    pub id: SymId,
    pub name: &'static [u8],
    /// Offset of the name in `.dynstr`.
    pub name_off: u32,
    /// `.gnu.hash` hash of the name (set for hashed entries).
    pub gnu_hash: u32,
    /// Version index for `.gnu.version`.
    pub version: u16,
    /// Defined in the output (a section or absolute address).
    pub defined: bool,
    /// In the hash tables, so the dynamic loader can bind other modules' references to it: every defined
    /// symbol, and an executable's imported functions whose canonical address is their PLT entry.
    pub hashed: bool,
}
