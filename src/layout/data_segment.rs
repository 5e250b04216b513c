//! Layout rule: where GNU ld's `DATA_SEGMENT_ALIGN` puts the data. Its scripts' data (the RELRO part, then the
//! rest) goes where `DATA_SEGMENT_ALIGN` and `DATA_SEGMENT_RELRO_END` put it: for `-n` (`--nmagic`, GNU ld's
//! default script without demand paging, in the one load that also holds the code) and for scripts that use
//! them (`script::walk`). GNU ld 2.40 decides that in a second sizing pass, from the first; this computes the
//! second pass's start from the sections' sizes.

use super::OutputSection;
use crate::elf::align_up;

/// Where the data starts, and how the end of its RELRO part is padded.
pub(super) struct DataStart {
    pub addr: u64,
    /// `Some(offset)`: the RELRO part ends `offset` bytes before a maximum-size page boundary (GNU's
    /// `DATA_SEGMENT_RELRO_END`, whose offset keeps `.got.plt`'s three reserved words inside it).
    pub relro_end_offset: Option<u64>,
}

/// The data's start after code ending at `dot`. `data` is the data sections in layout order, each with whether
/// the rules call it RELRO; `max_page` and `common_page` are `-z max-page-size` and `-z common-page-size`.
///
/// - With RELRO (`-z relro`): the RELRO part is laid out from the next page, its end rounded up to a maximum-size
///   page, and each RELRO section then moved up towards that end as far as its alignment lets it, from the last
///   back, as GNU ld does; the data starts where the first of them lands.
/// - Without: the next page at the same offset in it as `dot` (`ALIGN(MAXPAGESIZE) + (. & (MAXPAGESIZE - 1))`),
///   or the next page's start where that keeps the data on fewer common-size pages.
///
/// GNU ld takes the first way only where the RELRO part is not empty, or where it edited `.eh_frame` (which
/// makes it size the sections once more, in the RELRO phase): `has_eh_frame` stands for the second, since GNU
/// ld edits every `.eh_frame` that compilers write.
pub(super) fn start(
    dot: u64,
    data: &[(&OutputSection, bool)],
    (max_page, common_page): (u64, u64),
    relro: bool,
    has_eh_frame: bool,
) -> DataStart {
    // GNU's script: `DATA_SEGMENT_RELRO_END (SIZEOF (.got.plt) >= 24 ? 24 : 0, .)`, just before `.got.plt`
    // (12 for ELF32: three words either way).
    let reserved = 3 * crate::elf::word_align();
    let offset = match data.iter().find(|(o, _)| o.name == b".got.plt") {
        Some((o, _)) if o.size >= reserved => reserved,
        _ => 0,
    };
    let spans: Vec<(u64, u64)> = (data.iter())
        .filter(|&&(_, r)| r)
        .map(|&(o, _)| span(o))
        .collect();
    if relro && (!spans.is_empty() || offset > 0 || has_eh_frame) {
        return DataStart {
            addr: relro_base(dot, &spans, offset, max_page),
            relro_end_offset: Some(offset),
        };
    }
    let base = next_page_same_offset(dot, max_page);
    let mut end = base;
    for (o, _) in data {
        let (align, size) = span(o);
        end = align_up(end, align) + size;
    }
    DataStart {
        addr: sparing_base(dot, end, (max_page, common_page)),
        relro_end_offset: None,
    }
}

/// A section's alignment and the addresses it takes from the sections after it (none for `.tbss`).
pub(super) fn span(o: &OutputSection) -> (u64, u64) {
    let size = if o.is_tls() && o.is_nobits() {
        0
    } else {
        o.size
    };
    (o.align.max(1), size)
}

/// `DATA_SEGMENT_ALIGN`'s first value: the next page, at `dot`'s offset in its own.
pub(super) fn next_page_same_offset(dot: u64, max_page: u64) -> u64 {
    align_up(dot, max_page) + (dot & (max_page - 1))
}

/// With RELRO: the data's start after code ending at `dot`, for RELRO sections of `spans` (alignment, size)
/// whose end is `offset` bytes before a page boundary. They are laid out from the next page, the end rounded up
/// to a page, and each then moved up towards it as far as its alignment lets it, from the last back.
pub(super) fn relro_base(dot: u64, spans: &[(u64, u64)], offset: u64, max_page: u64) -> u64 {
    let mut at = align_up(dot, max_page);
    for &(align, size) in spans {
        at = align_up(at, align) + size;
    }
    let mut end = align_up(at + offset, max_page) - offset;
    for &(align, size) in spans.iter().rev() {
        end = (end - size) & !(align - 1);
    }
    end
}

/// Without RELRO: the data's start after code ending at `dot`, for data that would end at `end` from
/// `next_page_same_offset`: there, or the next page's start where that keeps the data on fewer common pages.
pub(super) fn sparing_base(dot: u64, end: u64, (max_page, common_page): (u64, u64)) -> u64 {
    let base = next_page_same_offset(dot, max_page);
    let common = common_page.clamp(1, max_page);
    let first = base.wrapping_neg() & (common - 1);
    let last = end & (common - 1);
    let saves_a_page = first != 0
        && last != 0
        && base & !(common - 1) != end & !(common - 1)
        && first + last <= common;
    match saves_a_page {
        true => align_up(dot, max_page) + ((dot + common - 1) & (max_page - common)),
        false => base,
    }
}
