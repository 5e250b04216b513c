//! The global allocator: the system's (glibc malloc), with its heaps backed by transparent huge pages where the
//! kernel gives them only on request (`/sys/kernel/mm/transparent_hugepage/enabled` is `madvise`, the default of
//! most distributions; with `always` or `never` nothing is done here).
//!
//! rivet's tables are large, fresh and short-lived, and each 4 KiB page of them costs a page fault when first
//! written, a sizeable share of a large link's CPU time. With `MADV_HUGEPAGE` one fault maps 2 MiB. glibc gives
//! the same advice with `GLIBC_TUNABLES=glibc.malloc.hugetlb=1`, but reads that only from the environment at
//! start-up, where a linker cannot set it; this wrapper gives it from inside, asking the kernel what each mapping
//! is (`PROCMAP_QUERY`, Linux 6.11) rather than trusting glibc's layout:
//! - each thread heap, when its thread starts ([`advise_thread_heap`]) or a block shows up in it: the 64 MiB
//!   reservation glibc makes per arena, aligned to its size;
//! - the main heap (brk) up to the break, again when a block shows up beyond what was advised;
//! - every other block of 2 MiB or more (glibc maps those on their own).
//!
//! The cost is memory: a touched huge page is resident whole, so peak memory grows a little. Where the kernel
//! compacts memory to find huge pages on a fault (`defrag` is `madvise`, the default), a fragmented machine can
//! make some faults slower; glibc's tunable has the same trade-off.
//!
//! Against the system allocator alone, the clang links gain and the others are about even. Outputs are
//! byte-identical.
//!
//! Not on a virtual machine whose host reclaims the guest's free memory ([`host_reclaims_free_memory`]): there a
//! huge page touched after a pause costs many times a warm one, while small pages cost the same either way.
//!
//! mimalloc (crate 0.1.52, mimalloc 2.2, as the global allocator in place of this one) lost on every workload it
//! was tried on, in wall time and in memory. It backs its arenas with huge pages, and purges what it frees, which
//! costs system time. Two tunings were tried:
//! - never purging (`MIMALLOC_PURGE_DELAY=-1`): a little faster than glibc, but with a peak above wild's, and on
//!   the huge pages that cost so much after a pause here;
//! - no huge pages and no eager commit (`MIMALLOC_ALLOW_THP=0`, `MIMALLOC_ARENA_EAGER_COMMIT=0`): still slower
//!   and larger than glibc.
//!
//! Outputs were byte-identical either way.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering::Relaxed};

/// glibc's heap size for thread arenas on 64-bit hosts (`HEAP_MAX_SIZE`, twice the largest mmap threshold): each
/// heap is one reservation of this size, aligned to it.
const HEAP: usize = 64 << 20;

/// Blocks from this size are advised themselves.
const LARGE_BLOCK: usize = 2 << 20;

/// Blocks from this size look up their heap (cheap enough to do for them only: a few loads).
const HEAP_PROBE_BLOCK: usize = 4 << 10;

/// Whether to advise (set by [`init`] before any thread starts; nothing is advised before).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// An open /proc/self/maps, to ask the kernel what a mapping is; -1 if none.
static MAPS: AtomicI32 = AtomicI32::new(-1);

/// The thread heaps (base addresses) looked at so far, plus 1 for those advised; 0 is a free slot. When all are
/// taken, no more heaps are advised.
static HEAPS: [AtomicUsize; 64] = [const { AtomicUsize::new(0) }; 64];

/// The advised part of the main heap.
static MAIN_HEAP: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];

pub struct Allocator;

// SAFETY: every request goes to `System` unchanged; the advice changes only how the kernel backs the pages.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        advise_block(p, layout.size());
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise_block(p, layout.size());
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        advise_block(p, new_size);
        p
    }
}

/// Reads the kernel's setting; call once, in the process that links, before any other thread starts.
pub fn init() {
    let enabled =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    let pmd = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
        .unwrap_or_default();
    // Only 2 MiB huge pages fit the sizes above (x86-64, and arm64 with 4 KiB pages); `always` needs no advice.
    if enabled.contains("[madvise]")
        && pmd.trim() == (2 << 20).to_string()
        && !host_reclaims_free_memory()
    {
        ENABLED.store(true, Relaxed);
        // Kept open for the process's life.
        if let Ok(maps) = std::fs::File::open("/proc/self/maps") {
            use std::os::fd::IntoRawFd;
            MAPS.store(maps.into_raw_fd(), Relaxed);
        }
    }
}

/// Whether this is a virtual machine whose host takes back memory the guest leaves free (virtio-balloon free page
/// reporting, `VIRTIO_BALLOON_F_REPORTING`: Firecracker and other cloud VMs). The guest reports free blocks of 2
/// MiB and up after about two seconds, and the host unmaps them; touching such a block again faults on the host
/// as well, page by page. A huge page is made of exactly such a block, so after a pause (the compiler running
/// before the link is enough) every huge-page fault is one of those, while small pages mostly come from memory
/// freed recently in smaller pieces, which is never reported.
///
/// On this development VM (Linux 6.18 under Firecracker), huge heap pages made the large links much slower after a
/// few seconds idle, or right after a compile that followed a pause, and only a little faster back to back. A
/// build is a pause for the linker's purposes, so where the host reclaims, no huge pages. Read once (a few system
/// calls).
pub fn host_reclaims_free_memory() -> bool {
    static REPORTING: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *REPORTING.get_or_init(|| {
        // Bit 5 of each balloon device's feature string ('0'/'1' per bit, lowest first).
        const VIRTIO_BALLOON_F_REPORTING: usize = 5;
        let Ok(dir) = std::fs::read_dir("/sys/bus/virtio/drivers/virtio_balloon") else {
            return false;
        };
        dir.flatten()
            .filter(|e| e.file_name().as_encoded_bytes().starts_with(b"virtio"))
            .any(|e| {
                std::fs::read(e.path().join("features"))
                    .is_ok_and(|f| f.get(VIRTIO_BALLOON_F_REPORTING) == Some(&b'1'))
            })
    })
}

/// Advises the calling thread's heap: for the rayon workers' start.
pub fn advise_thread_heap() {
    if !ENABLED.load(Relaxed) {
        return;
    }
    // SAFETY: a plain allocation, freed at once; only its address is used.
    unsafe {
        let p = libc::malloc(1);
        if !p.is_null() {
            advise_heap(p as usize, 1);
            libc::free(p);
        }
    }
}

#[inline]
fn advise_block(p: *mut u8, size: usize) {
    if size < HEAP_PROBE_BLOCK || p.is_null() || !ENABLED.load(Relaxed) {
        return;
    }
    if advise_heap(p as usize, size) || size < LARGE_BLOCK {
        return;
    }
    // A large block outside the heaps: glibc mapped it alone. From its first page to its last, all of it the
    // allocator's (a page boundary never splits one of its mappings).
    let start = p as usize & !4095;
    let end = (p as usize + size + 4095) & !4095;
    // SAFETY: the range is mapped memory of the allocator; MADV_HUGEPAGE changes no contents, and a failure
    // leaves ordinary pages.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

/// Advises the heap holding block `p` of `size` bytes the first time a block in it is seen; whether that heap is
/// advised. A thread heap (an anonymous 64 MiB reservation aligned to its size, read and write up to where its
/// arena has grown, inaccessible beyond) is advised from end to end; the main heap (grown with brk) up to the
/// break, and again when it has grown.
fn advise_heap(p: usize, size: usize) -> bool {
    let top = brk();
    if p < top {
        let (lo, hi) = (MAIN_HEAP[0].load(Relaxed), MAIN_HEAP[1].load(Relaxed));
        if lo <= p && p + size <= hi {
            return true;
        }
        let Some(m) = mapping_at(p) else {
            return false;
        };
        // From the start of the mapping holding `p` (or of what was advised before) to the break: all of it
        // the main heap, in one or more mappings.
        let start = if lo == 0 { m.start } else { lo.min(m.start) };
        let end = (top + 4095) & !4095;
        advise(start..end);
        MAIN_HEAP[0].store(start, Relaxed);
        MAIN_HEAP[1].store(end, Relaxed);
        return p + size <= end;
    }
    let base = p & !(HEAP - 1);
    // This heap's slot, claimed here; `base | 1` in a slot: advised. (Another thread may still be deciding: not
    // advised yet, as far as this one knows.)
    let mut claimed = None;
    for slot in &HEAPS {
        match slot.compare_exchange(0, base, Relaxed, Relaxed) {
            Ok(_) => {
                claimed = Some(slot);
                break;
            }
            Err(seen) if seen & !1 == base => return seen & 1 != 0,
            Err(_) => {}
        }
    }
    let Some(slot) = claimed else {
        return false;
    };
    let (Some(first), Some(last)) = (mapping_at(p), mapping_at(base + HEAP - 1)) else {
        return false;
    };
    let one_reservation = first.start == base
        && last.end == base + HEAP
        && (first.end == last.start || first == last);
    if !one_reservation {
        return false;
    }
    advise(base..base + HEAP);
    slot.store(base | 1, Relaxed);
    true
}

fn advise(range: std::ops::Range<usize>) {
    // SAFETY: the range is anonymous memory of the allocator; MADV_HUGEPAGE changes no contents.
    unsafe {
        libc::madvise(
            range.start as *mut libc::c_void,
            range.end - range.start,
            libc::MADV_HUGEPAGE,
        );
    }
}

/// Drops the page-table entries of `len` bytes at `at` (`MADV_DONTNEED`), so that they are not unmapped one by
/// one later (by a `munmap`, or the process's exit) on one thread. Used for the output's and the inputs' file
/// mappings.
///
/// # Safety
/// `at..at + len` lies in a live file mapping (starting on a page boundary), whose bytes stay in the page cache
/// and are mapped again by a later access: no contents change, and references into it stay valid. On anonymous
/// memory it would discard the contents.
pub unsafe fn drop_file_pages(at: usize, len: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        libc::madvise(at as *mut libc::c_void, len, libc::MADV_DONTNEED);
    }
}

/// The current program break (sbrk(0) reads it without a system call).
fn brk() -> usize {
    // SAFETY: sbrk(0) only reads the break.
    unsafe { libc::sbrk(0) as usize }
}

/// The anonymous mapping holding address `a`, from the kernel (`PROCMAP_QUERY` on /proc/self/maps, Linux 6.11);
/// `None` for a file mapping, no mapping, or an older kernel.
fn mapping_at(a: usize) -> Option<std::ops::Range<usize>> {
    let fd = MAPS.load(Relaxed);
    if fd < 0 {
        return None;
    }
    // struct procmap_query of <linux/fs.h>.
    #[repr(C)]
    #[derive(Default)]
    struct Query {
        size: u64,
        query_flags: u64,
        query_addr: u64,
        vma_start: u64,
        vma_end: u64,
        vma_flags: u64,
        vma_page_size: u64,
        vma_offset: u64,
        inode: u64,
        dev_major: u32,
        dev_minor: u32,
        vma_name_size: u32,
        build_id_size: u32,
        vma_name_addr: u64,
        build_id_addr: u64,
    }
    // _IOWR('f', 17, struct procmap_query)
    const PROCMAP_QUERY: u64 =
        3 << 30 | (std::mem::size_of::<Query>() as u64) << 16 | (b'f' as u64) << 8 | 17;
    let mut q = Query {
        size: std::mem::size_of::<Query>() as u64,
        query_addr: a as u64,
        ..Query::default()
    };
    // SAFETY: the kernel fills `q`, which it is told the size of; no name or build id buffer is passed.
    let r = unsafe { libc::ioctl(fd, PROCMAP_QUERY as _, &mut q as *mut Query) };
    if r != 0 {
        // ENOENT: no mapping there. Anything else: the kernel does not know the query; no more asking.
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::ENOENT) {
            MAPS.store(-1, Relaxed);
        }
        return None;
    }
    if q.inode != 0 || q.dev_major != 0 || q.dev_minor != 0 {
        return None;
    }
    Some(q.vma_start as usize..q.vma_end as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The VmFlags of the mapping holding `a`, from /proc/self/smaps.
    fn vm_flags(a: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ')
                && let Some((lo, hi)) = range.split_once('-')
                && let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
            {
                inside = (lo..hi).contains(&a);
            } else if inside && let Some(flags) = line.strip_prefix("VmFlags:") {
                return Some(flags.to_string());
            }
        }
        None
    }

    /// A new thread's heap is advised when it starts, the kernel tells anonymous memory from a file mapping, and
    /// a large block is advised; skipped where THP is not given on request or the kernel cannot answer queries.
    #[test]
    fn heaps_and_large_blocks_are_advised() {
        init();
        let block: Vec<u8> = Vec::with_capacity(100 << 10);
        if !ENABLED.load(Relaxed) || mapping_at(block.as_ptr() as usize).is_none() {
            return; // THP not on request, or no PROCMAP_QUERY
        }
        let exe = std::fs::File::open(std::env::current_exe().unwrap()).unwrap();
        // SAFETY: a read-only mapping of this test's own executable, only its address is used.
        let file = unsafe { memmap2::Mmap::map(&exe) }.unwrap();
        assert_eq!(
            mapping_at(file.as_ptr() as usize),
            None,
            "a file mapping passed for anonymous memory"
        );
        let p = std::thread::spawn(|| {
            advise_thread_heap();
            // SAFETY: a plain allocation, freed at once; only its address is used.
            unsafe {
                let p = libc::malloc(64);
                libc::free(p);
                p as usize
            }
        })
        .join()
        .unwrap();
        assert!(
            vm_flags(p).unwrap().contains(" hg"),
            "thread heap at {p:#x} not advised"
        );
        let large: Vec<u8> = Vec::with_capacity(5 << 20);
        let at = large.as_ptr() as usize;
        assert!(
            vm_flags(at).unwrap().contains(" hg"),
            "large block at {at:#x} not advised"
        );
    }
}
