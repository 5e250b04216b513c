//! `-b binary` (`--format=binary`): a file taken as raw bytes, which the link sees as the relocatable object GNU
//! ld makes of it: a writable `.data` section holding the bytes, and the globals `_binary_NAME_start` and
//! `_binary_NAME_end` at its ends and `_binary_NAME_size` (absolute), NAME being the path as given with every
//! character other than a letter or digit made `_`. Build systems embed blobs this way (`ld -r -b binary`).

use crate::elf::ObjHeader;

/// The object GNU ld makes of file `path` (as given) with contents `data`, for machine `machine`.
pub fn object(path: &str, data: &[u8], machine: u16) -> Vec<u8> {
    let stem: String = (path.chars())
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut strtab = vec![0u8];
    let mut name = |suffix: &str| {
        let at = strtab.len() as u32;
        strtab.extend_from_slice(format!("_binary_{stem}_{suffix}").as_bytes());
        strtab.push(0);
        at
    };
    let size = data.len() as u64;
    // Null, `.data`'s section symbol, then the globals in GNU ld's order.
    const ABS: u16 = object::elf::SHN_ABS;
    let syms: [(u32, u8, u16, u64); 5] = [
        (0, 0, 0, 0),
        (0, object::elf::STT_SECTION, 1, 0),
        (name("start"), 0x10, 1, 0),
        (name("size"), 0x10, ABS, size),
        (name("end"), 0x10, 1, size),
    ];
    let shstrtab = b"\0.data\0.symtab\0.strtab\0.shstrtab\0";
    let data_off = 64u64;
    let symtab_off = (data_off + size).next_multiple_of(8);
    let strtab_off = symtab_off + 24 * syms.len() as u64;
    let shstrtab_off = strtab_off + strtab.len() as u64;
    let shdr_off = (shstrtab_off + shstrtab.len() as u64).next_multiple_of(8);
    let mut out = vec![0u8; shdr_off as usize + 64 * 5];
    out[..16].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    put(&mut out, 16, &object::elf::ET_REL.to_le_bytes());
    put(&mut out, 18, &machine.to_le_bytes());
    put(&mut out, 20, &1u32.to_le_bytes());
    put(&mut out, 40, &shdr_off.to_le_bytes());
    put(&mut out, 52, &64u16.to_le_bytes());
    put(&mut out, 58, &64u16.to_le_bytes());
    put(&mut out, 60, &5u16.to_le_bytes());
    put(&mut out, 62, &4u16.to_le_bytes());
    put(&mut out, data_off as usize, data);
    for (k, &(name, info, shndx, value)) in syms.iter().enumerate() {
        let at = symtab_off as usize + 24 * k;
        put(&mut out, at, &name.to_le_bytes());
        out[at + 4] = info;
        put(&mut out, at + 6, &shndx.to_le_bytes());
        put(&mut out, at + 8, &value.to_le_bytes());
    }
    put(&mut out, strtab_off as usize, &strtab);
    put(&mut out, shstrtab_off as usize, shstrtab);
    use object::elf::{SHF_ALLOC, SHF_WRITE, SHT_PROGBITS, SHT_STRTAB, SHT_SYMTAB};
    // (name, type, flags, offset, size): `.data`, `.strtab`, `.shstrtab`; `.symtab` links and counts besides.
    let header = |name, sh_type, flags, offset, size| ObjHeader {
        name,
        sh_type,
        flags,
        offset,
        size,
        link: 0,
        info: 0,
        align: 1,
        entsize: 0,
    };
    let headers = [
        header(
            1,
            SHT_PROGBITS,
            (SHF_ALLOC | SHF_WRITE) as u64,
            data_off,
            size,
        ),
        ObjHeader {
            link: 3,
            info: 2,
            align: 8,
            entsize: 24,
            ..header(7, SHT_SYMTAB, 0, symtab_off, strtab_off - symtab_off)
        },
        header(15, SHT_STRTAB, 0, strtab_off, strtab.len() as u64),
        header(23, SHT_STRTAB, 0, shstrtab_off, shstrtab.len() as u64),
    ];
    for (k, h) in headers.iter().enumerate() {
        put(&mut out, shdr_off as usize + 64 * (k + 1), &h.bytes());
    }
    out
}

fn put(out: &mut [u8], at: usize, bytes: &[u8]) {
    out[at..at + bytes.len()].copy_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    #[test]
    fn symbols_and_section() {
        use crate::arch::Arch;
        let machine = crate::arch::x86_64::X86_64::E_MACHINE;
        let o = super::object("sub/blob.txt", b"hello blob\n", machine);
        let f = object::read::elf::ElfFile64::<object::Endianness>::parse(&o[..]).unwrap();
        use object::{Object, ObjectSection, ObjectSymbol};
        let data = f.section_by_name(".data").unwrap();
        assert_eq!(data.data().unwrap(), b"hello blob\n");
        let syms: Vec<(String, u64)> = (f.symbols())
            .filter(|s| s.is_global())
            .map(|s| (s.name().unwrap().to_string(), s.address()))
            .collect();
        assert_eq!(
            syms,
            [
                ("_binary_sub_blob_txt_start".to_string(), 0),
                ("_binary_sub_blob_txt_size".to_string(), 11),
                ("_binary_sub_blob_txt_end".to_string(), 11),
            ]
        );
    }
}
