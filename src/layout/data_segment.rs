//! Layout rule: where GNU ld's `DATA_SEGMENT_ALIGN` puts the data. A script's data (the RELRO part, then the
//! rest) goes where `DATA_SEGMENT_ALIGN` and `DATA_SEGMENT_RELRO_END` put it (`script::walk`), the default
//! layout's too (`default_script`). GNU ld 2.40 decides that in a second sizing pass, from the first; these
//! compute the second pass's start from the sections' sizes: with RELRO, the RELRO part is laid out from the
//! next page, its end rounded up to a maximum-size page and each RELRO section moved up towards that end as far
//! as its alignment lets it, from the last back; without, the next page at the same offset in it as the code's
//! end, or the next page's start where that keeps the data on fewer common-size pages. GNU ld takes the first
//! way only where the RELRO part is not empty, or where it edited `.eh_frame` (which makes it size the sections
//! once more, in the RELRO phase).

use super::OutputSection;
use crate::elf::align_up;

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
