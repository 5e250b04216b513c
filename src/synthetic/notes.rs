//! Notes the linker writes itself: `.note.package`, the packaging metadata (`--package-metadata=JSON`) that
//! Fedora's and other distributions' builds stamp into every binary (the FDO "Package Metadata for ELF Files"
//! format: owner `FDO`, type `NT_FDO_PACKAGING_METADATA`, the JSON text with its NUL, padded to 4 bytes, as the descriptor).

/// `NT_FDO_PACKAGING_METADATA`.
const NT_FDO_PACKAGING_METADATA: u32 = 0xcafe_1a7e;
const OWNER: &[u8; 4] = b"FDO\0";

/// The size of `.note.package` for `json`: the note header, the owner, and the text with its NUL, padded to 4.
pub fn package_size(json: &str) -> u64 {
    12 + OWNER.len() as u64 + (json.len() as u64 + 1).next_multiple_of(4)
}

/// Writes `.note.package` (`out` is `package_size(json)` bytes).
pub fn write_package(out: &mut [u8], json: &str) {
    // The descriptor's size counts its padding, as GNU ld and lld write it.
    let desc = (json.len() as u32 + 1).next_multiple_of(4);
    out.fill(0);
    out[0..4].copy_from_slice(&(OWNER.len() as u32).to_le_bytes());
    out[4..8].copy_from_slice(&desc.to_le_bytes());
    out[8..12].copy_from_slice(&NT_FDO_PACKAGING_METADATA.to_le_bytes());
    out[12..16].copy_from_slice(OWNER);
    out[16..16 + json.len()].copy_from_slice(json.as_bytes());
}
