//! Linker-made sections: which exist (`Synth`, and where each went, `SynthMap`), and the modules of those whose
//! contents are decided once and written from the same data (`dynamic`). A module here depends on no pass after
//! resolution: layout builds its data, the writer writes it, each through the module.

use crate::index::NONE;

pub mod dynamic;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Synth {
    Interp,
    BuildId,
    Hash,
    GnuHash,
    Dynsym,
    Dynstr,
    Versym,
    Verdef,
    Verneed,
    RelaDyn,
    RelaPlt,
    RelaIplt,
    RelrDyn,
    Plt,
    Iplt,
    Got,
    GotPlt,
    Dynamic,
    EhFrameHdr,
    Symtab,
    Strtab,
    Shstrtab,
}

impl Synth {
    const COUNT: usize = Synth::Shstrtab as usize + 1;
}

/// The output section of each linker-made section (`NONE` where there is none): an array, as the writer asks for
/// `.got` and `.plt` addresses per relocation (a hash lookup there was 1.4% of clang-so's profile).
#[derive(Clone, Copy, Debug)]
pub struct SynthMap([u32; Synth::COUNT]);

impl Default for SynthMap {
    fn default() -> Self {
        SynthMap([NONE; Synth::COUNT])
    }
}

impl std::ops::Index<Synth> for SynthMap {
    type Output = u32;
    /// The output section of a linker-made section the layout has made.
    fn index(&self, s: Synth) -> &u32 {
        let i = &self.0[s as usize];
        assert!(*i != NONE, "no {s:?} section");
        i
    }
}

impl SynthMap {
    #[inline]
    pub fn get(&self, s: Synth) -> Option<u32> {
        let i = self.0[s as usize];
        (i != NONE).then_some(i)
    }
    pub fn insert(&mut self, s: Synth, i: u32) {
        self.0[s as usize] = i;
    }
    /// The output sections of the linker-made sections present, but for `skip`'s.
    pub fn sections_but(&self, skip: Synth) -> impl Iterator<Item = u32> + '_ {
        (self.0.iter().enumerate())
            .filter(move |&(k, &i)| k != skip as usize && i != NONE)
            .map(|(_, &i)| i)
    }
    /// The same sections, renumbered.
    pub fn remap(&self, to: &[u32]) -> SynthMap {
        SynthMap(
            self.0
                .map(|i| if i == NONE { NONE } else { to[i as usize] }),
        )
    }
}
