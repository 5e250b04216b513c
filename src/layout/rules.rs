//! The default placement rules: which output section an input section goes to (by its name's family), the
//! order of output sections (their rank) and which segment each rank belongs to. They are the GNU ld / lld
//! defaults for x86-64 with separate code, kept as data here so that a parsed `SECTIONS` command can replace them
//! as a whole later.

use object::elf as E;

/// The output sections whose inputs are sorted by the priority in their names (`.init_array.N`), not by input
/// order.
pub const SORTED_NAMES: [&[u8]; 5] = [
    b".init_array",
    b".fini_array",
    b".preinit_array",
    b".ctors",
    b".dtors",
];

pub fn output_name(name: &[u8]) -> &[u8] {
    // Candidates by the character after the dot: called for every input section by several passes, most of
    // them debug or other sections that match none of the prefixes, which a linear scan checked 17 times.
    let candidates: &[&'static [u8]] = match name.get(1) {
        Some(b't') => &[b".text", b".tdata", b".tbss"],
        Some(b'r') => &[b".rodata"],
        Some(b'd') => &[b".data.rel.ro", b".data", b".dtors"],
        Some(b'b') => &[b".bss"],
        Some(b'g') => match name.strip_prefix(b".gnu.linkonce.") {
            Some(rest) => return linkonce_output(rest).unwrap_or(name),
            None => &[b".gcc_except_table"],
        },
        Some(b'i') => &[b".init_array"],
        Some(b'f') => &[b".fini_array"],
        Some(b'p') => &[b".preinit_array"],
        Some(b'c') => &[b".ctors"],
        Some(b'l') => &[b".ldata", b".lbss", b".lrodata"],
        Some(b's') => &[b".sdata"],
        _ => &[],
    };
    if name.first() == Some(&b'.') {
        for &p in candidates {
            if crate::names::in_section_family(name, p) {
                return p;
            }
        }
    }
    name
}

/// The output section of linkonce section `.gnu.linkonce.<rest>`, by the kind its name starts with, as GNU ld's
/// default script places them.
fn linkonce_output(rest: &[u8]) -> Option<&'static [u8]> {
    let kind = rest.split(|&c| c == b'.').next()?;
    Some(match kind {
        b"t" => b".text",
        b"r" => b".rodata",
        b"d" if rest.starts_with(b"d.rel.ro.") => b".data.rel.ro",
        b"d" => b".data",
        b"b" => b".bss",
        b"td" => b".tdata",
        b"tb" => b".tbss",
        b"l" => b".ldata",
        b"lr" => b".lrodata",
        b"lb" => b".lbss",
        b"wi" => b".debug_info",
        _ => return None,
    })
}

/// The output section of input section `name` of file `file`: its family's (`output_name`), but `.ctors` and
/// `.dtors` sections join `.init_array` and `.fini_array`, as GNU ld's default script places them (the C library
/// runs only the arrays), except those of `crtbegin*.o` and `crtend*.o`, whose `.ctors` hold the list markers of
/// the old scheme.
pub fn output_section_of<'a>(name: &'a [u8], file: &str) -> &'a [u8] {
    let n = output_name(name);
    let crt = || {
        let base = file.rsplit('/').next().unwrap_or(file);
        let base = base.rsplit('(').next().unwrap_or(base);
        (base.starts_with("crtbegin") || base.starts_with("crtend")) && base.ends_with(".o")
    };
    match n {
        b".ctors" if !crt() => b".init_array",
        b".dtors" if !crt() => b".fini_array",
        _ => n,
    }
}

/// The group of `.text`'s inputs an input section of `.text` belongs to: GNU ld's default script places them
/// group after group (each in input order, `.text.sorted.*` by name), cold code first and the rest last, so that
/// start-up and hot code share pages: `.text.unlikely` (and `.text.*_unlikely`), `.text.exit`, `.text.startup`,
/// `.text.hot`, `.text.sorted.*`, then everything else (`TEXT_MAIN`).
pub fn text_group(name: &[u8]) -> u8 {
    let Some(rest) = name.strip_prefix(b".text.") else {
        return TEXT_MAIN;
    };
    // Most names (`.text._Z...`, `.text.main_loop`) are ruled out by a byte at each end.
    if !matches!(rest.first(), Some(b'u' | b'e' | b's' | b'h')) && rest.last() != Some(&b'y') {
        return TEXT_MAIN;
    }
    let family = |p: &[u8]| {
        rest.strip_prefix(p)
            .is_some_and(|r| r.is_empty() || r[0] == b'.')
    };
    if family(b"unlikely") || rest.ends_with(b"_unlikely") {
        0
    } else if family(b"exit") {
        1
    } else if family(b"startup") {
        2
    } else if family(b"hot") {
        3
    } else if rest.starts_with(b"sorted.") {
        TEXT_SORTED
    } else {
        TEXT_MAIN
    }
}

/// `text_group`'s group sorted by name.
pub const TEXT_SORTED: u8 = 4;
/// `text_group`'s last group, and the group of every input section of another output section.
pub const TEXT_MAIN: u8 = 5;

/// What of the configuration the placement rules depend on.
#[derive(Clone, Copy)]
pub struct Rules {
    /// `-z relro -z now`: no PLT slot is written after start-up, so `.got.plt` joins the RELRO data (full RELRO,
    /// as GNU ld and lld do) instead of the writable data.
    pub full_relro: bool,
}

impl Rules {
    pub fn of(config: &crate::args::Config) -> Rules {
        Rules {
            // GNU ld's -N and -n scripts keep `.got.plt` apart whatever -z now says.
            full_relro: config.relro && config.bind_now && config.paged(),
        }
    }

    /// Output section order: the GNU ld / lld default for x86-64 with separate code.
    pub fn rank(&self, name: &[u8], sh_type: u32, flags: u64) -> u32 {
        match name {
            // Right after `.got`, in the RELRO class.
            b".got.plt" if self.full_relro && flags & E::SHF_ALLOC as u64 != 0 => 341,
            _ => rank(name, sh_type, flags),
        }
    }
}

/// The output sections `rank` names, each with the flags that give it its named rank (the read-only ones are
/// read-only, the others writable): the descriptions of the default layout written as a script
/// (`default_script`), in any order.
pub const NAMED: &[(&[u8], u64)] = &{
    const A: u64 = E::SHF_ALLOC as u64;
    const W: u64 = A | E::SHF_WRITE as u64;
    const X: u64 = A | E::SHF_EXECINSTR as u64;
    [
        (b".interp", A),
        (b".note.gnu.property", A),
        (b".note.gnu.build-id", A),
        (b".hash", A),
        (b".gnu.hash", A),
        (b".dynsym", A),
        (b".dynstr", A),
        (b".gnu.version", A),
        (b".gnu.version_d", A),
        (b".gnu.version_r", A),
        (b".rela.dyn", A),
        (b".rela.plt", A),
        (b".rela.iplt", A),
        (b".relr.dyn", A),
        (b".init", X),
        (b".plt", X),
        (b".iplt", X),
        (b".text", X),
        (b".fini", X),
        (b".rodata", A),
        (b".eh_frame_hdr", A),
        (b".eh_frame", A),
        (b".gcc_except_table", A),
        (b".tdata", W),
        (b".tbss", W),
        (b".preinit_array", W),
        (b".init_array", W),
        (b".fini_array", W),
        (b".ctors", W),
        (b".dtors", W),
        (b".data.rel.ro", W),
        (b".dynamic", W),
        (b".got", W),
        (b".got.plt", W),
        (b".data", W),
        (b".bss", W),
    ]
};

impl Rules {
    /// The rank of one of `NAMED`.
    pub fn named_rank(&self, name: &[u8]) -> Option<u32> {
        let &(_, flags) = NAMED.iter().find(|n| n.0 == name)?;
        Some(self.rank(name, E::SHT_PROGBITS, flags))
    }
}

/// The non-allocated output sections of GNU ld's default scripts (the final and the `-r` ones list the same), in
/// their order.
#[rustfmt::skip]
pub const UNALLOCATED: &[&[u8]] = &[
    b".stab", b".stabstr", b".stab.excl", b".stab.exclstr", b".stab.index", b".stab.indexstr", b".comment",
    b".gnu.build.attributes", b".debug", b".line", b".debug_srcinfo", b".debug_sfnames", b".debug_aranges",
    b".debug_pubnames", b".debug_info", b".debug_abbrev", b".debug_line", b".debug_frame", b".debug_str",
    b".debug_loc", b".debug_macinfo", b".debug_weaknames", b".debug_funcnames", b".debug_typenames",
    b".debug_varnames", b".debug_pubtypes", b".debug_ranges", b".debug_addr", b".debug_line_str",
    b".debug_loclists", b".debug_macro", b".debug_names", b".debug_rnglists", b".debug_str_offsets",
    b".debug_sup", b".gnu.attributes",
];

/// Where a non-allocated section goes among the others, as GNU ld's orphan placement puts it: the named ones in
/// `UNALLOCATED`'s order, any other right after `.comment`, but debugging information (GNU ld's `SEC_DEBUGGING`),
/// which goes after them all. Ties keep the order the sections are met in.
pub fn unallocated_rank(name: &[u8]) -> u32 {
    const COMMENT: u32 = 6;
    match UNALLOCATED.iter().position(|&n| n == name) {
        Some(i) => 1000 + 2 * i as u32,
        None if crate::gc::is_debug_information(name) => 1900,
        None => 1000 + 2 * COMMENT + 1,
    }
}

/// Output section order: the GNU ld / lld default for x86-64 with separate code, lazy binding.
fn rank(name: &[u8], sh_type: u32, flags: u64) -> u32 {
    let alloc = flags & E::SHF_ALLOC as u64 != 0;
    let write = flags & E::SHF_WRITE as u64 != 0;
    let exec = flags & E::SHF_EXECINSTR as u64 != 0;
    if !alloc {
        return match name {
            b".symtab" => 2000,
            b".strtab" => 2001,
            b".shstrtab" => 2002,
            _ => unallocated_rank(name),
        };
    }
    match name {
        b".interp" => 10,
        b".note.gnu.property" => 18,
        b".note.gnu.build-id" => 19,
        _ if sh_type == E::SHT_NOTE => 20,
        b".hash" => 30,
        b".gnu.hash" => 31,
        b".dynsym" => 32,
        b".dynstr" => 33,
        b".gnu.version" => 34,
        // Ties keep creation order: .gnu.version_d before .gnu.version_r.
        b".gnu.version_d" | b".gnu.version_r" => 35,
        b".rela.dyn" => 36,
        b".rela.plt" => 37,
        b".rela.iplt" => 38,
        b".relr.dyn" => 39,
        b".init" => 100,
        b".plt" => 110,
        b".iplt" => 111,
        b".text" => 120,
        b".fini" => 130,
        _ if exec => 125,
        b".rodata" => 200,
        b".eh_frame_hdr" => 220,
        b".eh_frame" => 230,
        b".gcc_except_table" => 240,
        _ if !write => 210,
        b".tdata" => 300,
        // Orphan TLS sections go with the named ones (`PT_TLS` is one range): contents after `.tdata`, zero-fill
        // after `.tbss`, as GNU ld places them by their flags.
        _ if flags & E::SHF_TLS as u64 != 0 && sh_type != E::SHT_NOBITS => 301,
        b".tbss" => 302,
        _ if flags & E::SHF_TLS as u64 != 0 => 303,
        b".preinit_array" => 310,
        b".init_array" => 311,
        b".fini_array" => 312,
        b".ctors" => 313,
        b".dtors" => 314,
        b".data.rel.ro" => 320,
        b".dynamic" => 330,
        b".got" => 340,
        b".got.plt" => 400,
        b".data" => 410,
        b".bss" => 450,
        _ if sh_type == E::SHT_NOBITS => 460,
        _ => 420,
    }
}

/// Which PT_LOAD a section belongs to: 0 = read-only before code (with the headers), 1 = code, 2 = read-only
/// after code, 3 = RELRO data, 4 = writable data.
pub fn segment_class(r: u32) -> u32 {
    match r {
        0..100 => 0,
        100..200 => 1,
        200..300 => 2,
        300..400 => 3,
        _ => 4,
    }
}

/// The priority of a sorted array's input section from its name (`.init_array.00100`: 100). `.ctors.N` and
/// `.dtors.N` count down (they ran backwards), so their priority is 65535 - N, as GNU ld sorts them among the arrays'.
pub fn init_priority(name: &[u8]) -> Option<u32> {
    for (p, inverted) in [
        (&b".init_array."[..], false),
        (b".fini_array.", false),
        (b".preinit_array.", false),
        (b".ctors.", true),
        (b".dtors.", true),
    ] {
        if let Some(rest) = name.strip_prefix(p) {
            let n: u32 = std::str::from_utf8(rest).ok()?.parse().ok()?;
            return Some(if inverted {
                65535u32.saturating_sub(n)
            } else {
                n
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `.comment` is where `unallocated_rank` puts the orphans after; debugging orphans go after the named ones.
    #[test]
    fn unallocated_orphans_after_comment() {
        let r = |n: &[u8]| unallocated_rank(n);
        assert_eq!(UNALLOCATED[6], b".comment");
        assert!(r(b".comment") < r(b".myinfo") && r(b".myinfo") < r(b".gnu.build.attributes"));
        assert!(
            r(b".debug_info") < r(b".debug_abbrev") && r(b".gnu.attributes") < r(b".debug_foo")
        );
    }

    /// Each of `NAMED` has a rank of its own, not one `rank` gives a section by its flags alone.
    #[test]
    fn named_sections_have_their_own_ranks() {
        for full_relro in [false, true] {
            let rules = Rules { full_relro };
            let mut ranks: Vec<u32> = NAMED
                .iter()
                .map(|n| rules.named_rank(n.0).unwrap())
                .collect();
            for (n, r) in NAMED.iter().zip(&ranks) {
                let by_flags = rank(b".unnamed", E::SHT_PROGBITS, n.1);
                assert_ne!(*r, by_flags, "{}", String::from_utf8_lossy(n.0));
                assert_ne!(*r, 20);
            }
            ranks.sort();
            ranks.dedup();
            // .gnu.version_d and .gnu.version_r share one.
            assert_eq!(ranks.len(), NAMED.len() - 1);
        }
    }
}
