//! The GOT and PLT family: `.got` (GOT and TLS slots), `.got.plt` (the lazily bound slots behind `.plt`), `.plt`,
//! `.iplt` (IFUNC stubs), and the dynamic relocations of their slots: `.rela.plt`, the head of `.rela.dyn` (the
//! GOT's, then the copy relocations), and the IRELATIVE area at its end (`.rela.iplt` in a static output). The
//! layout numbers every symbol's slots ([`Aux`]) and counts them ([`Counts`]); the sizes come from those counts
//! here, and the writer fills the same slots.

use super::Synth;
use super::rela::{self, DynRel};
use crate::arch::{Arch, PltShape};
use crate::index::{NONE, SymId};

/// A symbol's slots (`NONE` where it has none), numbered by the layout.
#[derive(Clone, Copy, Debug, Default)]
pub struct Aux {
    pub got: u32,
    pub gottp: u32,
    pub plt: u32,
    pub iplt: u32,
    pub dynsym: u32,
    pub copy_off: u64,
    /// Data copied into the output by a copy relocation: into `.bss`, or read-only data into `.data.rel.ro`
    /// (`copy_relro`; RELRO, read-only once relocated, as GNU ld places it).
    pub copied: bool,
    pub copy_relro: bool,
    /// The PLT entry is the function's address (address taken from non-PIC code).
    pub canonical: bool,
    /// Some relocation names the symbol through a non-weak symbol-table entry.
    pub strong_ref: bool,
    /// The slot an IFUNC stub jumps through (IRELATIVE), when `got` holds the stub's own address instead: in
    /// position-dependent output the stub is the function's one canonical address, GOT loads included.
    pub igot: u32,
    /// First of two GOT slots: general-dynamic (module id, offset) pair, and TLS descriptor (shared objects).
    pub tlsgd: u32,
    pub tlsdesc: u32,
}

/// What the family's sizes come from: the slots and dynamic relocations the layout counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub got: u32,
    pub plt: u32,
    pub iplt: u32,
    /// Dynamic relocations of GOT slots: `.rela.dyn`'s first area.
    pub got_dyn_relocs: u64,
    /// Copy relocations, the second.
    pub copy_relocs: u64,
    /// The input sections' dynamic relocations, the third.
    pub sec_dyn_relocs: u64,
    /// IRELATIVE relocations (of GOT slots and input sections): `.rela.dyn`'s last area, or `.rela.iplt`.
    pub irel_total: u64,
    /// `.got.plt` has its reserved header: the output has a PLT, is dynamic, or names the GOT's base.
    pub got_plt_header: bool,
    /// The output is dynamic: its dynamic relocations go in `.rela.dyn` (else IRELATIVE ones in `.rela.iplt`).
    pub dynamic: bool,
}

impl Counts {
    /// The sizes of the family's sections.
    pub fn sizes<A: Arch>(&self, plt: &PltShape) -> [(Synth, u64); 6] {
        let relocs = if self.dynamic {
            (
                Synth::RelaDyn,
                (self.got_dyn_relocs + self.copy_relocs + self.sec_dyn_relocs + self.irel_total)
                    * 24,
            )
        } else {
            (Synth::RelaIplt, self.irel_total * 24)
        };
        [
            (Synth::RelaPlt, self.plt as u64 * 24),
            (
                Synth::Plt,
                if self.plt > 0 {
                    plt.header + self.plt as u64 * plt.entry
                } else {
                    0
                },
            ),
            (Synth::Iplt, self.iplt as u64 * plt.iplt_entry),
            (Synth::Got, self.got as u64 * 8),
            (
                Synth::GotPlt,
                if self.got_plt_header {
                    A::GOTPLT_RESERVED + self.plt as u64 * 8
                } else {
                    0
                },
            ),
            relocs,
        ]
    }

    /// The first entry of `.rela.dyn`'s IRELATIVE area, after the GOT's, the copy and the input sections'
    /// relocations (in a dynamic output).
    pub fn irelative_start(&self) -> u64 {
        self.got_dyn_relocs + self.copy_relocs + self.sec_dyn_relocs
    }
}

/// One of the family's sections in the output: its address and its bytes.
pub struct Section<'a> {
    pub addr: u64,
    pub bytes: &'a mut [u8],
}

/// The family's sections in the output (`None`, or no bytes, where it has none).
#[derive(Default)]
pub struct Sections<'a> {
    pub got: Option<Section<'a>>,
    pub got_plt: Option<Section<'a>>,
    pub plt: Option<Section<'a>>,
    pub iplt: Option<Section<'a>>,
    pub rela_dyn: &'a mut [u8],
    pub rela_plt: &'a mut [u8],
    pub rela_iplt: &'a mut [u8],
}

/// What the writer needs besides the slots.
pub struct Facts {
    pub counts: Counts,
    pub plt: PltShape,
    /// The local-dynamic module pair's first GOT slot, or `NONE`.
    pub tlsld: u32,
    /// Position-independent output.
    pub pic: bool,
    /// A shared object.
    pub shared: bool,
    /// GOT slots holding a link-time address are relocated by `.relr.dyn` (`-z pack-relative-relocs`).
    pub pack_relr: bool,
    /// `.dynamic`'s address (0 without one), which `.got.plt` starts with.
    pub dynamic_addr: u64,
    /// The address of the copy-relocated data in `.bss`.
    pub copy_base: u64,
    /// The address of the copies of read-only data.
    pub copy_relro_base: u64,
}

/// A symbol with slots, as the writer needs it.
pub struct Symbol {
    /// Bound by the dynamic linker (imports; in a shared object also its preemptible definitions).
    pub imported: bool,
    pub ifunc: bool,
    /// Its address.
    pub value: u64,
}

/// What the writer asks the layout about the symbols with slots (a trait, so that the loop over them is
/// monomorphised).
pub trait Lookup {
    /// The slots of symbol `id`, one of those that have any.
    fn slots(&self, id: SymId) -> &Aux;
    fn symbol(&self, id: SymId) -> Symbol;
    /// Whether symbol `id` is absolute, so that a position-independent output does not relocate its GOT slot.
    fn is_absolute(&self, id: SymId) -> bool;
    /// Address `addr`'s offset from the thread pointer.
    fn tp_offset(&self, addr: u64) -> u64;
    /// Address `addr`'s offset in the TLS block.
    fn dtp_offset(&self, addr: u64) -> u64;
}

/// The offset of PLT entry `k` in `.plt`.
fn plt_entry(plt: &PltShape, k: u32) -> u64 {
    plt.header + plt.entry * k as u64
}

/// The offset of IFUNC stub `k` in `.iplt`.
fn iplt_entry(plt: &PltShape, k: u32) -> u64 {
    plt.iplt_entry * k as u64
}

/// Writes the family's sections: `.got.plt`'s header and `.plt`'s, then the slots of the symbols `ids` (those
/// with slots, in order), the local-dynamic module pair, and the copy relocations.
pub fn write<A: Arch>(out: Sections, ids: &[SymId], facts: &Facts, lookup: &impl Lookup) {
    let Sections {
        got,
        got_plt,
        plt,
        iplt,
        rela_dyn,
        rela_plt,
        rela_iplt,
    } = out;
    let (head, irelative) = if facts.counts.dynamic {
        let at = (24 * facts.counts.irelative_start() as usize).min(rela_dyn.len());
        rela_dyn.split_at_mut(at)
    } else {
        (rela_dyn, rela_iplt)
    };
    let mut w = Writer {
        got,
        got_plt,
        plt,
        iplt,
        rela_plt,
        relocs: Appended {
            dynamic: head,
            n: 0,
            irelative,
            n_irelative: 0,
        },
        facts,
        lookup,
    };
    w.headers::<A>();
    for &id in ids {
        w.symbol_slots::<A>(id);
    }
    w.tls_module::<A>();
    w.copy_relocs::<A>(ids);
    debug_assert_eq!(
        w.relocs.n as u64,
        facts.counts.got_dyn_relocs + facts.counts.copy_relocs
    );
}

/// The dynamic relocations the writer appends: the GOT's and the copy relocations at the head of `.rela.dyn`, and
/// the IRELATIVE ones of GOT slots.
struct Appended<'a> {
    dynamic: &'a mut [u8],
    n: usize,
    irelative: &'a mut [u8],
    n_irelative: usize,
}

impl Appended<'_> {
    fn push(&mut self, offset: u64, r_type: u32, sym: u32, addend: i64) {
        let r = DynRel {
            offset,
            r_type,
            sym,
            addend,
        };
        rela::put(&mut self.dynamic[24 * self.n..], &r);
        self.n += 1;
    }
    fn push_irelative(&mut self, offset: u64, value: u64, r_type: u32) {
        let r = DynRel {
            offset,
            r_type,
            sym: 0,
            addend: value as i64,
        };
        rela::put(&mut self.irelative[24 * self.n_irelative..], &r);
        self.n_irelative += 1;
    }
}

struct Writer<'a, 'f, L> {
    got: Option<Section<'a>>,
    got_plt: Option<Section<'a>>,
    plt: Option<Section<'a>>,
    iplt: Option<Section<'a>>,
    rela_plt: &'a mut [u8],
    relocs: Appended<'a>,
    facts: &'f Facts,
    lookup: &'f L,
}

/// Writes the 8 bytes of `value` at `at`.
fn put_u64(bytes: &mut [u8], at: usize, value: u64) {
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
}

impl<L: Lookup> Writer<'_, '_, L> {
    /// `.got.plt` starts with `.dynamic`'s address; `.plt` with the lazy-binding header.
    fn headers<A: Arch>(&mut self) {
        if let Some(gp) = &mut self.got_plt {
            put_u64(gp.bytes, 0, self.facts.dynamic_addr);
        }
        if let (Some(p), Some(gp)) = (&mut self.plt, &self.got_plt)
            && self.facts.counts.plt > 0
        {
            A::write_plt0(&self.facts.plt, p.bytes, p.addr, gp.addr);
        }
    }

    /// The slots of symbol `id`.
    fn symbol_slots<A: Arch>(&mut self, id: SymId) {
        let x = *self.lookup.slots(id);
        let s = self.lookup.symbol(id);
        if x.got != NONE {
            self.got_slot::<A>(id, &x, &s);
        }
        if x.gottp != NONE {
            self.gottp_slot::<A>(&x, &s);
        }
        if x.plt != NONE {
            self.plt_entry::<A>(&x);
        }
        if x.tlsgd != NONE {
            self.tlsgd_pair::<A>(&x, &s);
        }
        if x.tlsdesc != NONE {
            let addr = self.got_addr(x.tlsdesc, "TLS pairs imply a .got");
            let (sym, addend) = self.tls_reference(&x, &s, s.imported);
            self.relocs.push(addr, A::R_TLSDESC, sym, addend);
        }
        if x.iplt != NONE {
            self.iplt_entry::<A>(&x);
        }
    }

    /// The address of GOT slot `k`.
    fn got_addr(&self, k: u32, missing: &str) -> u64 {
        self.got.as_ref().expect(missing).addr + 8 * k as u64
    }

    /// A TLS dynamic relocation names a preemptible symbol, or else this module with the offset in its block.
    fn tls_reference(&self, x: &Aux, s: &Symbol, preemptible: bool) -> (u32, i64) {
        if preemptible {
            (x.dynsym, 0)
        } else {
            (0, self.lookup.dtp_offset(s.value) as i64)
        }
    }

    /// The address of an IFUNC's canonical stub: its PLT entry, or its `.iplt` one.
    fn stub_addr(&self, x: &Aux) -> Option<u64> {
        let addr = |s: &Option<Section>| s.as_ref().map_or(0, |s| s.addr);
        if x.plt != NONE {
            Some(addr(&self.plt) + plt_entry(&self.facts.plt, x.plt))
        } else if x.iplt != NONE {
            Some(addr(&self.iplt) + iplt_entry(&self.facts.plt, x.iplt))
        } else {
            None
        }
    }

    /// A GOT slot: bound by the dynamic linker, filled by an IFUNC's resolver, or a link-time address.
    fn got_slot<A: Arch>(&mut self, id: SymId, x: &Aux, s: &Symbol) {
        let addr = self.got_addr(x.got, "GOT slots imply a .got");
        if s.imported {
            self.relocs.push(addr, A::R_GLOB_DAT, x.dynsym, 0);
            return;
        }
        // An IFUNC's slot is filled by its resolver (IRELATIVE); with a canonical stub that is a separate slot,
        // the one the stub jumps through, and the GOT slot holds the stub's address.
        let canonical_stub = s.ifunc && x.igot != NONE;
        let stub = canonical_stub.then(|| {
            self.stub_addr(x)
                .expect("a canonical IFUNC slot implies a stub")
        });
        let got = self.got.as_mut().expect("GOT slots imply a .got");
        if s.ifunc {
            let slot = if canonical_stub { x.igot } else { x.got };
            self.relocs
                .push_irelative(got.addr + 8 * slot as u64, s.value, A::R_IRELATIVE);
            put_u64(got.bytes, 8 * slot as usize, s.value);
        }
        if !s.ifunc || canonical_stub {
            // A link-time address: the symbol's, or the canonical stub's.
            let v = stub.unwrap_or(s.value);
            put_u64(got.bytes, 8 * x.got as usize, v);
            // Packed: the layout's .relr.dyn names this slot.
            if self.facts.pic && !self.lookup.is_absolute(id) && !self.facts.pack_relr {
                self.relocs.push(addr, A::R_RELATIVE, 0, v as i64);
            }
        }
    }

    /// A GOT slot holding the symbol's offset from the thread pointer (initial-exec TLS).
    fn gottp_slot<A: Arch>(&mut self, x: &Aux, s: &Symbol) {
        let addr = self.got_addr(x.gottp, "GOT slots imply a .got");
        if s.imported || self.facts.shared {
            let (sym, addend) = self.tls_reference(x, s, s.imported);
            self.relocs.push(addr, A::R_TPOFF64, sym, addend);
        } else {
            let tp = self.lookup.tp_offset(s.value);
            let got = self.got.as_mut().expect("GOT slots imply a .got");
            put_u64(got.bytes, 8 * x.gottp as usize, tp);
        }
    }

    /// A PLT entry, its `.got.plt` slot (first pointing back into the PLT, for lazy binding) and its
    /// `R_JUMP_SLOT`.
    fn plt_entry<A: Arch>(&mut self, x: &Aux) {
        let shape = &self.facts.plt;
        let (p, gp) = (
            self.plt.as_mut().expect("PLT entries imply .plt"),
            self.got_plt.as_mut().expect("and .got.plt"),
        );
        let in_plt = plt_entry(shape, x.plt);
        let in_gotplt = A::GOTPLT_RESERVED + 8 * x.plt as u64;
        let entry = p.addr + in_plt;
        let slot = gp.addr + in_gotplt;
        A::write_plt_entry(
            shape,
            &mut p.bytes[in_plt as usize..],
            entry,
            slot,
            x.plt,
            p.addr,
        );
        put_u64(
            gp.bytes,
            in_gotplt as usize,
            A::plt_lazy_target(shape, p.addr, entry),
        );
        let r = DynRel {
            offset: slot,
            r_type: A::R_JUMP_SLOT,
            sym: x.dynsym,
            addend: 0,
        };
        rela::put(&mut self.rela_plt[24 * x.plt as usize..], &r);
    }

    /// A general-dynamic TLS pair: (module id, offset in its block).
    fn tlsgd_pair<A: Arch>(&mut self, x: &Aux, s: &Symbol) {
        let addr = self.got_addr(x.tlsgd, "TLS pairs imply a .got");
        if s.imported {
            self.relocs.push(addr, A::R_DTPMOD64, x.dynsym, 0);
            self.relocs.push(addr + 8, A::R_DTPOFF64, x.dynsym, 0);
        } else {
            self.relocs.push(addr, A::R_DTPMOD64, 0, 0);
            let off = self.lookup.dtp_offset(s.value);
            let got = self.got.as_mut().expect("TLS pairs imply a .got");
            put_u64(got.bytes, 8 * x.tlsgd as usize + 8, off);
        }
    }

    /// An IFUNC stub in `.iplt`, jumping through the slot its resolver fills.
    fn iplt_entry<A: Arch>(&mut self, x: &Aux) {
        let slot = if x.igot != NONE { x.igot } else { x.got };
        let slot = self.got_addr(slot, "IFUNC stubs use a GOT slot");
        let p = self.iplt.as_mut().expect("IFUNC stubs imply .iplt");
        let in_iplt = iplt_entry(&self.facts.plt, x.iplt);
        A::write_iplt_entry(
            &self.facts.plt,
            &mut p.bytes[in_iplt as usize..],
            p.addr + in_iplt,
            slot,
        );
    }

    /// The local-dynamic module pair's `R_DTPMOD64` (its offset half stays 0).
    fn tls_module<A: Arch>(&mut self) {
        if self.facts.tlsld != NONE {
            let addr = self.got_addr(self.facts.tlsld, "a TLS module pair implies a .got");
            self.relocs.push(addr, A::R_DTPMOD64, 0, 0);
        }
    }

    /// Copy relocations follow the GOT's, one per copy (aliases share theirs).
    fn copy_relocs<A: Arch>(&mut self, ids: &[SymId]) {
        let mut seen = std::collections::HashSet::new();
        for &id in ids {
            let x = *self.lookup.slots(id);
            if !x.copied {
                continue;
            }
            let base = if x.copy_relro {
                self.facts.copy_relro_base
            } else {
                self.facts.copy_base
            };
            let addr = base + x.copy_off;
            if seen.insert(addr) {
                self.relocs.push(addr, A::R_COPY, x.dynsym, 0);
            }
        }
    }
}
