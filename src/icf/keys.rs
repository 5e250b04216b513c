//! What `--icf` compares of a section: its constant part (flags, output section, contents, and each
//! relocation's offset, type and target up to the target section's class), as a hash and an exact comparison,
//! and its variable part, the sections its relocations point into (`Keys::refs`), whose classes `partition`
//! compares.
//!
//! Two relocation targets are constant-equal (lld's rules) when they are the same symbol with the same addend; or
//! absolute values that are equal; or the same piece of merge sections of one merge group at the same offset
//! (equal bytes there mean one copy in the output); or equal offsets (value + addend) into input sections, which
//! are then equal if those sections are in one class. A preemptible symbol, an IFUNC, an undefined, imported or
//! linker-defined one only equals itself.

use super::Candidates;
use crate::args::Config;
use crate::diag::{Errors, Result};
use crate::elf::{LE, Rela};
use crate::gc::Liveness;
use crate::index::{FileId, NONE, SecIdx, SymId};
use crate::parse::{ObjectFile, SectionKind};
use crate::resolve::{Def, Resolved};
use object::elf as E;

/// A reference to a section that is not a candidate: this bit, and the section's own number.
pub const FIXED: u32 = 1 << 31;

/// Per candidate: the hash of its constant part, and the sections its relocations point into.
pub struct Keys {
    pub hash: Vec<u64>,
    /// Candidate `c`'s relocations into input sections, in order: `refs[start[c]..start[c + 1]]`, each a candidate
    /// number or `FIXED` | a number of the section's own.
    pub refs: Vec<u32>,
    pub start: Vec<u32>,
}

impl Keys {
    pub fn refs_of(&self, c: u32) -> &[u32] {
        &self.refs[self.start[c as usize] as usize..self.start[c as usize + 1] as usize]
    }
}

/// What the comparisons read.
#[derive(Clone, Copy)]
pub struct Cx<'a> {
    pub config: &'a Config,
    pub res: &'a Resolved,
    pub live: &'a Liveness,
}

/// A relocation's target, as far as the constant comparison sees it.
#[derive(PartialEq, Eq)]
enum Target<'a> {
    /// Only the same symbol (a global's id, or `LOCAL` | file << 32 | index) with the same addend is equal.
    Symbol(u64, i64),
    Absolute(u64),
    /// A piece of a merge section: its group's key, its bytes, and the offset in it.
    Piece(GroupKey<'a>, &'a [u8], u64),
    /// An offset in input section (file, section).
    Section(u64, u32, u32),
}

/// What places two sections in one output section and merge group: the output section by the rules, the script
/// statement (0 without a script), and for merge sections the entry size, strings flag and alignment of strings
/// (0 for constants, which share a group whatever their alignment: `crate::merge`).
#[derive(PartialEq, Eq, Hash)]
struct GroupKey<'a>(&'a [u8], u32, u64, bool, u64);

const LOCAL: u64 = 1 << 63;

/// The keys of every candidate, per file in parallel.
pub fn section_keys(
    config: &Config,
    res: &Resolved,
    live: &Liveness,
    cands: &Candidates,
) -> Result<Keys> {
    let cx = Cx { config, res, live };
    let mut sec_base = Vec::with_capacity(res.objects.len());
    let mut total = 0u64;
    for o in &res.objects {
        sec_base.push(total as u32);
        total += o.sections.len() as u64;
    }
    if total >= FIXED as u64 {
        return Err(Errors::one("--icf: too many input sections"));
    }
    let per_file: Vec<(Vec<u64>, Vec<u32>, Vec<u32>)> = res.runs.map(|f| {
        let (mut hashes, mut refs, mut counts) = (Vec::new(), Vec::new(), Vec::new());
        for (s, &c) in cands.index[f.index()].iter().enumerate() {
            if c == NONE {
                continue;
            }
            let before = refs.len();
            let s = SecIdx::new(s);
            hashes.push(section_hash(cx, f, s, cands.out[c as usize], |tf, ts| {
                let t = cands.index[tf as usize][ts as usize];
                refs.push(if t == NONE {
                    FIXED | (sec_base[tf as usize] + ts)
                } else {
                    t
                });
            }));
            counts.push((refs.len() - before) as u32);
        }
        (hashes, refs, counts)
    });
    let mut keys = Keys {
        hash: Vec::with_capacity(cands.list.len()),
        refs: Vec::new(),
        start: Vec::with_capacity(cands.list.len() + 1),
    };
    keys.start.push(0);
    for (hashes, refs, counts) in per_file {
        keys.hash.extend(hashes);
        for n in counts {
            keys.start.push(keys.start.last().unwrap() + n);
        }
        keys.refs.extend(refs);
    }
    Ok(keys)
}

/// The hash of section `s` of object `f`'s constant part; `refer` is called with the input section of each
/// relocation that points into one, in order.
fn section_hash(
    cx: Cx,
    f: FileId,
    s: SecIdx,
    (out, stmt): (&[u8], u32),
    mut refer: impl FnMut(u32, u32),
) -> u64 {
    let o = &cx.res.objects[f.index()];
    let sec = o.sec(s);
    let mut h = xxhash_rust::xxh3::xxh3_64(sec.data());
    for v in [flags(&sec), u64::from(sec.sh_type()), sec.size()] {
        h = mix(h, v);
    }
    h = mix(mix(h, crate::names::hash_name(out)), u64::from(stmt));
    h = mix(h, sec.relas().len() as u64);
    for r in sec.relas() {
        h = mix(mix(h, r.r_offset.get(LE)), u64::from(r.r_type(LE, false)));
        h = mix(
            h,
            match target(cx, f, r) {
                Target::Symbol(sym, addend) => mix(mix(1, sym), addend as u64),
                Target::Absolute(v) => mix(2, v),
                Target::Piece(key, bytes, off) => {
                    let k = [key.2, u64::from(key.3), key.4, u64::from(key.1), off];
                    let name = crate::names::hash_name(key.0);
                    (k.into_iter()).fold(mix(3, xxhash_rust::xxh3::xxh3_64(bytes)), mix) ^ name
                }
                Target::Section(v, tf, ts) => {
                    refer(tf, ts);
                    mix(4, v)
                }
            },
        );
    }
    h
}

/// Whether the constant parts of candidates `a` and `b` are equal.
pub fn constant_equal(cx: Cx, cands: &Candidates, a: u32, b: u32) -> bool {
    let ((fa, sa), (fb, sb)) = (cands.list[a as usize], cands.list[b as usize]);
    let (x, y) = (
        cx.res.objects[fa as usize].sec(SecIdx(sa)),
        cx.res.objects[fb as usize].sec(SecIdx(sb)),
    );
    if flags(&x) != flags(&y)
        || x.sh_type() != y.sh_type()
        || x.size() != y.size()
        || x.relas().len() != y.relas().len()
        || cands.out[a as usize] != cands.out[b as usize]
        || x.data() != y.data()
    {
        return false;
    }
    x.relas().iter().zip(y.relas()).all(|(p, q)| {
        p.r_offset.get(LE) == q.r_offset.get(LE)
            && p.r_type(LE, false) == q.r_type(LE, false)
            && match (target(cx, FileId(fa), p), target(cx, FileId(fb), q)) {
                (Target::Section(v, ..), Target::Section(w, ..)) => v == w,
                (t, u) => t == u,
            }
    })
}

/// The output section of section `s` of object `f` by the rules, and its script statement (0 without a script)
/// (as `Candidates::out`).
fn output_of(cx: Cx<'_>, f: FileId, s: SecIdx) -> (&[u8], u32) {
    let o = &cx.res.objects[f.index()];
    let stmt = cx.live.script.get(f.index()).map_or(0, |v| v[s.index()]);
    (
        crate::layout::rules::output_section_of(o.sec_name(s.index()), &o.name),
        stmt,
    )
}

/// The flags that matter: not `SHF_GROUP` (a COMDAT member's code is the same as a plain section's) nor
/// `SHF_INFO_LINK`, which no output keeps.
fn flags(sec: &crate::parse::Sec) -> u64 {
    sec.flags() & !u64::from(E::SHF_GROUP | E::SHF_INFO_LINK)
}

/// One step of the hash: FxHash's.
#[inline]
fn mix(h: u64, v: u64) -> u64 {
    (h.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95)
}

/// The target of relocation `r` of object `f`.
fn target<'a>(cx: Cx<'a>, f: FileId, r: &Rela) -> Target<'a> {
    let res = cx.res;
    let f = f.index();
    let o = &res.objects[f];
    let sym = r.r_sym(LE, false) as usize;
    let addend = r.r_addend.get(LE);
    let local = |k: usize, i: usize| Target::Symbol(LOCAL | (k as u64) << 32 | i as u64, addend);
    let (tf, ti) = match sym.checked_sub(o.first_global) {
        _ if sym >= o.syms.len() => return local(f, sym),
        None => (f, sym),
        Some(k) => {
            let Some(&g) = res.object_ids[f].get(k) else {
                return local(f, sym);
            };
            let ident = Target::Symbol(u64::from(g.0), addend);
            match res.defs[g.index()] {
                Def::Object { file, sym } if !preemptible(cx, g, file, sym) => {
                    (file.index(), sym as usize)
                }
                _ => return ident,
            }
        }
    };
    let t = &res.objects[tf];
    let st = &t.syms[ti];
    let (shndx, value) = (t.sym_shndx(ti) as usize, st.st_value.get(LE));
    if shndx == E::SHN_ABS as usize {
        return Target::Absolute(value.wrapping_add(addend as u64));
    }
    let ident = || match sym.checked_sub(o.first_global) {
        Some(k) => Target::Symbol(u64::from(res.object_ids[f][k].0), addend),
        None => local(f, sym),
    };
    if shndx == 0 || shndx >= t.sections.len() || st.st_type() == E::STT_GNU_IFUNC {
        return ident();
    }
    match t.sections[shndx].kind {
        SectionKind::Regular => {
            Target::Section(value.wrapping_add(addend as u64), tf as u32, shndx as u32)
        }
        SectionKind::Merge => {
            // lld's rule, as the writer's: a section symbol's piece is found by value + addend, another symbol's
            // by its value, the addend then added.
            let section_sym = st.st_type() == E::STT_SECTION;
            let at = if section_sym {
                value.wrapping_add(addend as u64)
            } else {
                value
            };
            let extra = if section_sym { 0 } else { addend as u64 };
            match piece_at(cx, t, FileId::new(tf), SecIdx::new(shndx), at) {
                Some((key, bytes, start)) => {
                    Target::Piece(key, bytes, (at - start).wrapping_add(extra))
                }
                None => ident(),
            }
        }
        _ => ident(),
    }
}

/// Whether global `g`, defined as symbol `i` of object `file`, may be preempted at run time.
fn preemptible(cx: Cx, g: SymId, file: FileId, i: u32) -> bool {
    let t = crate::symbols::Target::Object { file, sym: i };
    crate::symbols::is_preemptible(cx.res, cx.config, g, t)
}

/// The merge piece of section `s` of object `t` (file `f`) holding byte `at`: its group's key, its bytes and its
/// offset. `None` where `at` is in no whole piece.
fn piece_at<'a>(
    cx: Cx<'a>,
    t: &'a ObjectFile,
    f: FileId,
    s: SecIdx,
    at: u64,
) -> Option<(GroupKey<'a>, &'a [u8], u64)> {
    let sec = t.sec(s);
    let (d, e) = (sec.data(), sec.entsize() as usize);
    let at = usize::try_from(at).ok().filter(|&a| a < d.len())?;
    if e == 0 {
        return None;
    }
    let strings = sec.flags() & E::SHF_STRINGS as u64 != 0;
    let unit = at - at % e;
    let (start, end) = if !strings {
        (unit, unit + e)
    } else {
        let zero = |i: usize| d[i..i + e].iter().all(|&b| b == 0);
        let mut start = unit;
        while start >= e && !zero(start - e) {
            start -= e;
        }
        let mut end = unit;
        while end + e <= d.len() && !zero(end) {
            end += e;
        }
        (start, end + e)
    };
    let bytes = d.get(start..end)?;
    let (out, stmt) = output_of(cx, f, s);
    let align = if strings { sec.align() } else { 0 };
    Some((
        GroupKey(out, stmt, sec.entsize(), strings, align),
        bytes,
        start as u64,
    ))
}
