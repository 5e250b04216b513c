//! `.interp`: the program interpreter's path (the dynamic linker) with its NUL, which `PT_INTERP` points at,
//! sized and written here from the same path. Whether an output has one, and which path, the layout decides
//! (`--dynamic-linker`, else the architecture's).

/// The size of `.interp` for `path`.
pub fn size(path: &[u8]) -> u64 {
    path.len() as u64 + 1
}

/// Writes `.interp` (`out` is `size(path)` bytes).
pub fn write(out: &mut [u8], path: &[u8]) {
    out[..path.len()].copy_from_slice(path);
    out[path.len()] = 0;
}
