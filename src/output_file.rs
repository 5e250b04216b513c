//! The output file's life, apart from its contents: where the image is built (a new file beside the target, the
//! old output reused in place, or a heap buffer), how its pages are prepared (huge pages, pre-faulted in
//! parallel, or zeroed where no writer covers them), and how it takes the output's name (renamed over the old
//! one, which is removed later and off the link's path). The writers only see [`OutputFile::bytes`].
//!
//! The rule it keeps: an existing output is replaced only by a complete new one, and nothing that is not a regular
//! file is ever renamed over or removed.

use crate::args::Config;
use crate::cleanup;
use crate::diag::{Errors, Result};
use rayon::prelude::*;
use std::io::Write;
use std::ops::Range;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The page size the holes of a sparse output are rounded to.
const PAGE: usize = 4096;
/// The smallest hole left in an output: gaps under this are written as zeros like any padding.
const HOLE_MIN: usize = 1 << 20;

/// An output being written.
pub struct OutputFile {
    buf: OutputBuffer,
    path: PathBuf,
    tmp: PathBuf,
    size: u64,
    /// The target is an existing file that is not a regular one (`special_output`), written into as it is.
    special: bool,
    /// The old output's file is reused (`--update-in-place`).
    reused: bool,
    /// Large gaps no writer touches (`holes`): left unallocated, never faulted in or written.
    holes: Vec<Range<usize>>,
    /// The temporary file, open and `flock`ed while this link writes it (`temp_in_use`).
    lock: Option<std::fs::File>,
    /// The permission bits asked of a new file (the umask applies): executable unless `not_executable`.
    mode: u32,
}

impl OutputFile {
    /// Opens the output of `config` for an image of `size` bytes. `may_reuse`: writing is proved not to fail
    /// (`scan::WriteCheck`), so the old output may be written into (`take_old_output`): from the first byte
    /// written on, its old contents are gone. `first`: a range the caller fills right away, pre-faulted first.
    ///
    /// `holes`: ranges no writer touches, ascending; those of a page or more (the padding a large alignment
    /// asks for) stay holes of a sparse file, so that such an output costs neither disk blocks nor memory.
    pub fn open(
        config: &Config,
        size: u64,
        may_reuse: bool,
        first: Range<usize>,
        holes: Vec<Range<usize>>,
    ) -> Result<OutputFile> {
        let out_path = &config.output;
        let special = special_output(out_path)?;
        let mut tmp = temp_path(out_path);
        // Another link to the same output is writing it (a build that runs the same link twice at once): this one
        // takes a name of its own and leaves the old output to it.
        let concurrent = temp_in_use(&tmp);
        if concurrent {
            tmp = tmp.with_extension(format!("{}", std::process::id()));
        }
        let holes: Vec<Range<usize>> = holes
            .into_iter()
            .map(|r| r.start.next_multiple_of(PAGE)..r.end / PAGE * PAGE)
            .filter(|r| r.end >= r.start + HOLE_MIN)
            .collect();
        // An old output is reused only where it needs no holes punched.
        let may_reuse = may_reuse && holes.is_empty() && !concurrent;
        // A raw image (`--oformat binary`) is cut from the ELF image built in memory (`replace_contents`).
        let mapped = config.mmap_output && !config.binary_output;
        let reused = if !special && mapped && config.update_in_place && may_reuse {
            take_old_output(out_path, &tmp, size)
        } else {
            None
        };
        let mut file = OutputFile {
            buf: OutputBuffer::Heap(Vec::new()),
            path: out_path.clone(),
            tmp,
            size,
            special,
            reused: reused.is_some(),
            holes,
            lock: None,
            mode: 0o777,
        };
        file.buf = if let Some(old) = reused {
            lock(&old.file);
            let map = reuse_output(&old, size).map_err(|e| {
                old.give_back(out_path, &file.tmp);
                Errors::one(format!(
                    "cannot map output file {}: {}",
                    out_path.display(),
                    crate::diag::io_reason(&e)
                ))
            })?;
            OutputBuffer::Mapped {
                map,
                shrink: (old.len > size).then_some(old.file),
            }
        } else if mapped && !special {
            let (buf, lock) = file.new_mapping(first)?;
            file.lock = Some(lock);
            buf
        } else {
            OutputBuffer::Heap(vec![0u8; size as usize])
        };
        Ok(file)
    }

    /// A new file under the temporary name, allocated and mapped, with `first` pre-faulted; and the file, locked.
    fn new_mapping(&self, first: Range<usize>) -> Result<(OutputBuffer, std::fs::File)> {
        let (tmp, size) = (&self.tmp, self.size);
        // Registered before the file exists: a signal that comes as it is created must find it.
        cleanup::register(tmp);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(tmp)
            .map_err(|e| {
                let e = crate::diag::io_reason(&e);
                Errors::one(format!(
                    "cannot open output file {}: {e}",
                    self.path.display()
                ))
            })?;
        lock(&file);
        file.set_len(size).map_err(|e| self.no_room(e))?;
        // Blocks allocated up front: ext4 then does not reserve delayed-allocation blocks page by page under the
        // inode's i_data_sem while the output is pre-faulted, which the threads contended on. A full disk or a file
        // size limit is then a clear error instead of a SIGBUS while writing the mapping. Otherwise best effort: a
        // file system without fallocate allocates as the pages are written.
        //
        // Not on tmpfs, where fallocate allocates and zeroes every page on one thread: there the pre-fault
        // allocates them on all threads, and reports a full file system as an error (MADV_POPULATE_WRITE fails
        // where a write would raise SIGBUS). A kernel without that advice (before Linux 5.14) gets the fallocate.
        if !(is_tmpfs(&file) && populate_supported()) {
            use std::os::fd::AsRawFd;
            for r in self.written(0..size as usize) {
                let (at, len) = (r.start as libc::off_t, (r.end - r.start) as libc::off_t);
                // SAFETY: fallocate only allocates blocks of a file this process just created.
                if unsafe { libc::fallocate(file.as_raw_fd(), 0, at, len) } != 0 {
                    let e = std::io::Error::last_os_error();
                    if matches!(e.raw_os_error(), Some(libc::ENOSPC | libc::EFBIG)) {
                        drop(file);
                        return Err(self.no_room(e));
                    }
                    break;
                }
            }
        }
        // SAFETY: the file is ours (created and locked under the temporary name) and sized before mapping.
        let map = unsafe { memmap2::MmapMut::map_mut(&file) }.map_err(|e| {
            remove_temp(tmp);
            let e = crate::diag::io_reason(&e);
            Errors::one(format!(
                "cannot map output file {}: {e}",
                self.path.display()
            ))
        })?;
        advise_huge_pages(&map);
        prefault(&map, first).map_err(|e| self.no_room(e))?;
        Ok((OutputBuffer::Mapped { map, shrink: None }, file))
    }

    /// The output could not be stored (a full disk or tmpfs, a file size limit): says so, and leaves nothing behind.
    fn no_room(&self, e: std::io::Error) -> Errors {
        remove_temp(&self.tmp);
        Errors::one(format!(
            "cannot write output file {}: {} (the output would take {})",
            self.path.display(),
            crate::diag::io_reason(&e),
            human_size(self.size)
        ))
    }

    /// The output is not a program (a relocatable object): a new file is not made executable, as with GNU ld.
    pub fn not_executable(&mut self) {
        self.mode = 0o666;
    }

    /// The image's bytes.
    pub fn bytes(&mut self) -> &mut [u8] {
        self.buf.bytes()
    }

    /// Whether the old output's file is written into.
    pub fn is_reused(&self) -> bool {
        self.reused
    }

    /// Whether the image is a file mapping (its pages may be released once written, `write`'s build id).
    pub fn is_mapped(&self) -> bool {
        matches!(self.buf, OutputBuffer::Mapped { .. })
    }

    /// Makes the image ready for the writers: a new mapping's pages are faulted in on all threads; a reused one's
    /// bytes in the ranges `uncovered` returns (those no writer covers) are zeroed, so that the new output's bytes
    /// are those of a fresh link whatever the old file held.
    pub fn prepare(&mut self, uncovered: impl FnOnce() -> Vec<Range<usize>>) -> Result<()> {
        let reused = self.reused;
        let written: Vec<Range<usize>> = self.written(0..self.size as usize).collect();
        match &mut self.buf {
            OutputBuffer::Mapped { map, .. } if reused => {
                clear(map, &uncovered());
                Ok(())
            }
            OutputBuffer::Mapped { map, .. } => {
                let r = written.into_iter().try_for_each(|r| prefault(map, r));
                r.map_err(|e| self.no_room(e))
            }
            OutputBuffer::Heap(_) => Ok(()),
        }
    }

    /// The parts of `range` outside the holes, ascending.
    fn written(&self, range: Range<usize>) -> impl Iterator<Item = Range<usize>> + '_ {
        let starts = std::iter::once(range.start).chain(self.holes.iter().map(|h| h.end));
        let ends = self
            .holes
            .iter()
            .map(|h| h.start)
            .chain(std::iter::once(range.end));
        starts
            .zip(ends)
            .map(move |(a, b)| a.max(range.start)..b.min(range.end))
            .filter(|r| r.start < r.end)
    }

    /// Gives up a link that failed while writing: the temporary file is removed (a reused old output is lost
    /// here, which `may_reuse` says cannot happen).
    pub fn discard(self) {
        if let OutputBuffer::Mapped { .. } = &self.buf {
            remove_temp(&self.tmp);
        }
    }

    /// Makes `image` the output's contents, in place of the image built (kept in memory for this: see `open`).
    pub fn replace_contents(&mut self, image: Vec<u8>) {
        debug_assert!(matches!(self.buf, OutputBuffer::Heap(_)));
        self.size = image.len() as u64;
        self.holes.clear();
        self.buf = OutputBuffer::Heap(image);
    }

    /// Puts the finished image in place under the output's name.
    pub fn commit(self) -> Result<()> {
        let written: Vec<Range<usize>> = self.written(0..self.size as usize).collect();
        let OutputFile {
            buf,
            path,
            tmp,
            size,
            special,
            lock: _lock,
            mode,
            ..
        } = self;
        let finish = || -> std::io::Result<()> {
            match buf {
                OutputBuffer::Mapped { map, shrink } => {
                    // Unmapped before the caller hears the link is done, never left to the (forked) process's
                    // exit: while a writable mapping exists the kernel refuses to execute the file (ETXTBSY).
                    drop(map);
                    if let Some(file) = shrink {
                        file.set_len(size)?;
                    }
                    set_mode(&tmp, mode)?;
                }
                OutputBuffer::Heap(v) if special => {
                    // Written into as it is: no temporary file, no rename, its mode left alone.
                    let mut f = std::fs::OpenOptions::new()
                        .write(true)
                        .truncate(true)
                        .open(&path)?;
                    return f.write_all(&v);
                }
                OutputBuffer::Heap(v) => {
                    use std::os::unix::fs::FileExt;
                    cleanup::register(&tmp);
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .create(true)
                        .truncate(true)
                        .custom_flags(libc::O_NOFOLLOW)
                        .open(&tmp)?;
                    lock(&f);
                    f.set_len(size)?;
                    for r in written {
                        f.write_all_at(&v[r.clone()], r.start as u64)?;
                    }
                    drop(f);
                    set_mode(&tmp, mode)?;
                }
            }
            let old = move_old_output(&path);
            let r = std::fs::rename(&tmp, &path);
            if r.is_ok() {
                cleanup::clear();
            }
            if let Some((old, size)) = old {
                if r.is_err() {
                    let _ = std::fs::rename(&old, &path);
                } else if size >= BACKGROUND_UNLINK_MIN {
                    unlink_in_background(&old);
                } else {
                    let _ = std::fs::remove_file(&old);
                }
            }
            r
        };
        finish().map_err(|e| {
            remove_temp(&tmp);
            let e = crate::diag::io_reason(&e);
            Errors::one(format!("cannot write output file {}: {e}", path.display()))
        })
    }
}

enum OutputBuffer {
    Mapped {
        map: memmap2::MmapMut,
        /// A reused old output longer than the new one: cut to the mapping's length once it is unmapped.
        shrink: Option<std::fs::File>,
    },
    Heap(Vec<u8>),
}

impl OutputBuffer {
    fn bytes(&mut self) -> &mut [u8] {
        match self {
            OutputBuffer::Mapped { map, .. } => &mut map[..],
            OutputBuffer::Heap(v) => &mut v[..],
        }
    }
}

/// Whether the output names an existing file that is not a regular one, through any symlinks: a character device
/// such as `/dev/null`, a FIFO, a socket. Such a file is written into from a heap buffer, as GNU ld and lld do:
/// a new file renamed over it would replace the node itself (run as root, the machine's `/dev/null`), and its
/// temporary file would be made beside the node (in `/dev`). A directory is an error.
fn special_output(out: &Path) -> Result<bool> {
    match std::fs::metadata(out) {
        Ok(m) if m.is_dir() => Err(Errors::one(format!(
            "cannot open output file {}: Is a directory",
            out.display()
        ))),
        Ok(m) => Ok(!m.is_file()),
        Err(_) => Ok(false),
    }
}

/// Huge pages for the output: with MADV_HUGEPAGE, ext4 (Linux 6.18 here) fills the page cache with 2 MiB folios
/// and maps each with one page-table entry (FilePmdMapped in smaps), so pre-faulting and unmapping handle 512
/// times fewer entries: opening, pre-faulting and closing the output all get faster, with the same bytes and the
/// same peak memory. Advice only: a file system or kernel without large folios ignores it. One cost on this VM:
/// memory left free for a few seconds goes back to the host (free page reporting, in 2 MiB blocks) and is slow to
/// touch again, and huge folios are made of exactly those blocks. So after a pause a large output pre-faults
/// slower than with small folios; back to back, as in a build, huge folios win.
fn advise_huge_pages(map: &memmap2::MmapMut) {
    let _ = map.advise(memmap2::Advice::HugePage);
}

/// Maps a reused old output for the new one, `size` bytes: grown first if shorter (the old bytes stay), mapped
/// and pre-faulted; the caller zeroes it. Nothing of the old contents is lost until this returns, so on an error
/// `OldOutput::give_back` restores the old output. A longer old file is cut after writing.
fn reuse_output(old: &OldOutput, size: u64) -> std::io::Result<memmap2::MmapMut> {
    if size > old.len {
        old.file.set_len(size)?;
    }
    // SAFETY: the file is the old output, renamed to this process's temporary name and checked to be used by no
    // other process (`take_old_output`); it is at least `size` bytes long.
    let map = unsafe {
        memmap2::MmapOptions::new()
            .len(size as usize)
            .map_mut(&old.file)?
    };
    advise_huge_pages(&map);
    let _t = crate::timing::span("prefault output");
    prefault(&map, 0..map.len())?;
    Ok(map)
}

/// Replacing an existing output has two hidden costs, both growing with the file's size. ext4 (`auto_da_alloc`)
/// starts writeback of the new file when a rename replaces an existing one, and dropping the old file's last link
/// frees its pages synchronously. So the old output is first renamed aside (the new one follows immediately, so
/// the name is missing only between two renames) and then removed: by a detached helper process (`rivet
/// --rivet-internal-unlink`) when it is large, after this process has exited.
const BACKGROUND_UNLINK_MIN: u64 = 4 << 20;

/// Renames an existing regular output aside; returns its new name and size.
fn move_old_output(out: &Path) -> Option<(PathBuf, u64)> {
    let meta = std::fs::symlink_metadata(out).ok()?;
    if !meta.is_file() {
        return None;
    }
    let name = out.file_name()?.to_string_lossy().into_owned();
    // One name per output, like the temporary file's: a leftover is replaced by the next link's. Anything but a
    // regular file there is left alone, and a name of this process's own used instead.
    let mut old = out.with_file_name(format!(".{name}.rivet-old"));
    if std::fs::symlink_metadata(&old).is_ok_and(|m| !m.is_file()) {
        old = out.with_file_name(format!(".{name}.rivet-old-{}", std::process::id()));
    }
    std::fs::rename(out, &old).ok()?;
    Some((old, meta.len()))
}

/// Set in a `--fork` child: an old output is removed after the parent has been told the link is done (the
/// child's own exit is off the caller's path already), instead of by a helper process whose start would be on the
/// link's path.
pub static DEFER_UNLINK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

static DEFERRED: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// Removes the old output whose removal was deferred, if any.
pub fn remove_deferred() {
    let path = DEFERRED.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(path) = path {
        let _ = std::fs::remove_file(path);
    }
}

fn unlink_in_background(old: &Path) {
    use std::process::{Command, Stdio};
    if DEFER_UNLINK.load(std::sync::atomic::Ordering::Relaxed) {
        *DEFERRED.lock().unwrap_or_else(|e| e.into_inner()) = Some(old.to_path_buf());
        return;
    }
    let spawned = std::env::current_exe().and_then(|exe| {
        Command::new(exe)
            .arg(UNLINK_HELPER_FLAG)
            .arg(old)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    });
    if spawned.is_err() {
        let _ = std::fs::remove_file(old);
    }
}

/// Faults the fresh output mapping in, in parallel chunks (`MADV_POPULATE_WRITE`), instead of one trap per page
/// while sections are copied. A kernel without the advice (before Linux 5.14) is no error: the pages fault in as
/// they are written. A page that cannot be allocated, where a write would raise SIGBUS, is: no space left.
fn prefault(map: &memmap2::MmapMut, range: Range<usize>) -> std::io::Result<()> {
    // One huge folio per chunk (the mapping is MADV_HUGEPAGE): smaller chunks (512 KiB) made the threads queue on
    // each other's folio locks, and the pre-fault slower.
    const CHUNK: usize = 1 << 21;
    let (start, end) = (range.start.min(map.len()), range.end.min(map.len()));
    (0..(end - start).div_ceil(CHUNK))
        .into_par_iter()
        .try_for_each(|k| {
            let off = start + k * CHUNK;
            match map.advise_range(memmap2::Advice::PopulateWrite, off, CHUNK.min(end - off)) {
                Err(e) if e.raw_os_error() == Some(libc::EFAULT) => {
                    Err(std::io::Error::from_raw_os_error(libc::ENOSPC))
                }
                Err(e) if e.raw_os_error() != Some(libc::EINVAL) => Err(e),
                _ => Ok(()),
            }
        })
}

/// Zeroes ranges of a pre-faulted mapping (ascending, disjoint), in parallel chunks.
fn clear(map: &mut [u8], ranges: &[Range<usize>]) {
    const CHUNK: usize = 1 << 21;
    let len = map.len();
    let mut pieces: Vec<&mut [u8]> = Vec::new();
    let (mut rest, mut at) = (map, 0usize);
    for r in ranges {
        let (start, end) = (r.start.clamp(at, len), r.end.min(len));
        if start >= end {
            continue;
        }
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(start - at);
        let (range, tail) = tail.split_at_mut(end - start);
        pieces.extend(range.chunks_mut(CHUNK));
        (rest, at) = (tail, end);
    }
    pieces.into_par_iter().for_each(|c| c.fill(0));
}

/// An old output taken for reuse (`take_old_output`): its file, under the temporary name, and its length.
struct OldOutput {
    file: std::fs::File,
    len: u64,
}

impl OldOutput {
    /// Puts the old output back as it was, under its name.
    fn give_back(&self, out: &Path, tmp: &Path) {
        let _ = self.file.set_len(self.len);
        let _ = std::fs::rename(tmp, out);
        cleanup::clear();
    }
}

/// `--update-in-place`: the existing output renamed to `tmp` and opened for writing, with blocks for `size` bytes,
/// when it is a regular file with one name that no other process has open or mapped; otherwise `None`, with the
/// file back under its name, untouched.
///
/// Writing into the old file instead of a new one saves allocating and zeroing the new file's page cache and
/// blocks (and freeing the old file's): mold does it by default. The danger is a process that still uses the old
/// file (a running program, a loaded shared library), which would see its code change under it; mold relies on
/// ETXTBSY, which only protects running executables. Here the kernel answers for every user: a write lease
/// (`F_SETLEASE`) is granted only when no other open file description of the file exists, and a mapping (a loaded
/// shared library) keeps its description open; a running executable refuses the write open with ETXTBSY. The file
/// is renamed first, so nothing can open it by its name between the check and the writing. A file with other
/// hard links is left alone: they would see the change. So is a file mostly out of the page cache
/// (`mostly_cached`).
///
/// The blocks are reserved without changing the file's length (`FALLOC_FL_KEEP_SIZE`), so a full disk or file
/// system without fallocate leaves the old output whole and the link goes on with a new file (which reports a
/// full disk as an error). So does an output over the file size limit (`RLIMIT_FSIZE`), which stores into a
/// mapping of existing blocks would not notice.
fn take_old_output(out: &Path, tmp: &Path, size: u64) -> Option<OldOutput> {
    use std::os::fd::AsRawFd;
    let meta = std::fs::symlink_metadata(out).ok()?;
    if !reusable(&meta) || size > file_size_limit() {
        return None;
    }
    // From here a signal removes the old output: it is about to be overwritten.
    cleanup::register(tmp);
    if std::fs::rename(out, tmp).is_err() {
        cleanup::clear();
        return None;
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(tmp)
        .ok()
        .filter(|f| mostly_cached(f, meta.len().min(size)))
        .filter(|f| {
            let fd = f.as_raw_fd();
            // SAFETY: fcntl and fallocate on a descriptor this function owns; the lease is dropped right after it
            // is granted, and the blocks are reserved past the end without changing the length.
            unsafe {
                libc::fcntl(fd, libc::F_SETLEASE, libc::F_WRLCK) == 0
                    && libc::fcntl(fd, libc::F_SETLEASE, libc::F_UNLCK) == 0
                    && libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, size as libc::off_t) == 0
            }
        });
    match file {
        Some(file) => Some(OldOutput {
            len: meta.len(),
            file,
        }),
        None => {
            let _ = std::fs::rename(tmp, out);
            cleanup::clear();
            None
        }
    }
}

/// Whether at least 7/8 of the first `len` bytes of `file` are in the page cache (`cachestat`, Linux 6.5; taken
/// as yes where the kernel cannot tell). Reusing an old output that is not cached reads it back from the disk
/// (the pre-fault must bring each page in before it can be written), only to overwrite it: on this project's VM,
/// an evicted large output took far longer to pre-fault than a cached one, and longer than a new file. Page cache
/// is evicted under memory pressure, after a reboot, or, on machines with proactive reclaim (DAMON), after about
/// a minute unused.
fn mostly_cached(file: &std::fs::File, len: u64) -> bool {
    use std::os::fd::AsRawFd;
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct CacheStat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    /// The same number on every architecture (the unified system call table).
    const SYS_CACHESTAT: libc::c_long = 451;
    if len == 0 {
        return true;
    }
    let range = Range { off: 0, len };
    let mut st = CacheStat::default();
    // SAFETY: cachestat reads `range` and writes `st`, both live for the call, on a descriptor this process owns.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const Range,
            &mut st as *mut CacheStat,
            0,
        )
    };
    if r != 0 {
        return true;
    }
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as u64;
    st.nr_cache * 8 >= len.div_ceil(page) * 7
}

/// Whether a file `--update-in-place` may write into, by its metadata: a regular file with one name (other hard
/// links would see the change). `take_old_output` checks the rest when it takes the file.
pub fn reusable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.is_file() && meta.nlink() == 1
}

/// The largest file this process may write (`RLIMIT_FSIZE`), in bytes.
fn file_size_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: getrlimit fills the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim) } != 0
        || lim.rlim_cur == libc::RLIM_INFINITY
    {
        return u64::MAX;
    }
    lim.rlim_cur
}

/// Whether the kernel knows `MADV_POPULATE_WRITE`: madvise(2) checks the advice before it looks at the range, and
/// an empty range at (page-aligned) address 0 is otherwise a no-op.
fn populate_supported() -> bool {
    // SAFETY: an empty range; no memory is touched.
    unsafe { libc::madvise(std::ptr::null_mut(), 0, libc::MADV_POPULATE_WRITE) == 0 }
}

fn is_tmpfs(file: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: fstatfs fills the zeroed struct it is given.
    unsafe {
        let mut st: libc::statfs = std::mem::zeroed();
        libc::fstatfs(file.as_raw_fd(), &mut st) == 0 && st.f_type == libc::TMPFS_MAGIC
    }
}

/// The hidden first argument that makes rivet only remove the file named by the second.
pub const UNLINK_HELPER_FLAG: &str = "--rivet-internal-unlink";

/// A byte count for messages: exact below 1 MiB, else in binary units with one decimal.
fn human_size(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1 << 20 {
        return format!("{n} bytes");
    }
    let k = ((63 - n.leading_zeros()) / 10).min(6) as usize;
    format!(
        "{:.1} {}",
        n as f64 / (1u64 << (10 * k)) as f64,
        UNITS[k - 1]
    )
}

/// The temporary name of the output being written: one per output, so that a leftover of a killed link (which no
/// handler could remove) is replaced by the next link to the same output instead of piling up.
fn temp_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map_or_else(|| "a.out".into(), |n| n.to_string_lossy().into_owned());
    out.with_file_name(format!(".{name}.rivet-tmp"))
}

/// Whether the temporary name `tmp` is taken: by a file a live process holds (each link `flock`s it while
/// writing; the lock dies with the process, so a killed link's leftover is free), or by anything but a regular
/// file (a symlink, a FIFO), which is never opened, replaced or removed.
fn temp_in_use(tmp: &Path) -> bool {
    use std::os::fd::AsRawFd;
    match std::fs::symlink_metadata(tmp) {
        Err(_) => return false,
        Ok(m) if !m.is_file() => return true,
        Ok(_) => {}
    }
    let Ok(f) = std::fs::File::open(tmp) else {
        return true;
    };
    // SAFETY: flock on a descriptor this function owns; closing it drops the lock taken.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) != 0 }
}

/// Marks the temporary file as this link's (`temp_in_use`); best effort.
fn lock(f: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor the caller owns.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
}

fn remove_temp(tmp: &Path) {
    let _ = std::fs::remove_file(tmp);
    cleanup::clear();
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = mode & !umask();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

fn umask() -> u32 {
    // There is no way to read the umask without setting it; set and restore it once.
    unsafe extern "C" {
        fn umask(mask: u32) -> u32;
    }
    // SAFETY: umask is async-signal-safe and only affects this process.
    unsafe {
        let m = umask(0o022);
        umask(m);
        m
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn human_sizes() {
        assert_eq!(super::human_size(4096), "4096 bytes");
        assert_eq!(super::human_size(3 << 20), "3.0 MiB");
        assert_eq!(super::human_size(1 << 61), "2.0 EiB");
        assert_eq!(super::human_size(u64::MAX), "16.0 EiB");
    }
}
