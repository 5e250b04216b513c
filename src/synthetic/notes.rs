//! Notes the linker writes itself, each sized and written here: the build id (`.note.gnu.build-id`, whose id is
//! computed by the writer over the finished image, so only its layout and header are here) and `.note.package`, the packaging metadata (`--package-metadata=JSON`) that
//! Fedora's and other distributions' builds stamp into every binary (the FDO "Package Metadata for ELF Files"
//! format: owner `FDO`, type `NT_FDO_PACKAGING_METADATA`, the JSON text with its NUL, padded to 4 bytes, as the descriptor).

use crate::args::BuildId;

/// The length of the id `--build-id=style` makes (0 for none): 16 bytes for `fast`, `md5` and `uuid`, 20 for
/// `sha1`, and the bytes given as `0xHEX`.
pub fn build_id_len(style: &BuildId) -> u64 {
    match style {
        BuildId::None => 0,
        BuildId::Fast | BuildId::Md5 | BuildId::Uuid => 16,
        BuildId::Sha1 => 20,
        BuildId::Hex(h) => h.len() as u64,
    }
}

/// `NT_GNU_BUILD_ID`.
const NT_GNU_BUILD_ID: u32 = 3;
const GNU: &[u8; 4] = b"GNU\0";
/// Where the id starts in the note: after the header and the owner.
const BUILD_ID_DESC: usize = 12 + GNU.len();

/// The size of the build id note for an id of `len` bytes (none for 0).
pub fn build_id_size(len: u64) -> u64 {
    if len > 0 {
        BUILD_ID_DESC as u64 + len
    } else {
        0
    }
}

/// Writes the build id note's header and owner (`out` is `build_id_size(len)` bytes) and returns where the id
/// goes, which the writer fills once the image it is computed from is finished.
pub fn write_build_id_header(out: &mut [u8], len: u64) -> std::ops::Range<usize> {
    out[0..4].copy_from_slice(&(GNU.len() as u32).to_le_bytes());
    out[4..8].copy_from_slice(&(len as u32).to_le_bytes());
    out[8..12].copy_from_slice(&NT_GNU_BUILD_ID.to_le_bytes());
    out[12..16].copy_from_slice(GNU);
    BUILD_ID_DESC..BUILD_ID_DESC + len as usize
}

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
