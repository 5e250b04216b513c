//! `--build-id=sha1` is BLAKE3 of the output image with the id's own bytes zero, truncated to 20 bytes. rivet
//! hashes the 1 MiB chunks that nothing writes after the input sections while the linker-made sections are still
//! being written, and the rest at the end; this checks, on outputs of several MiB with sections of every kind,
//! that the id is still the digest of the finished image, so a writer that touches a chunk after it was hashed
//! shows up here. Linked three times (a new output, over the old one, and from a heap buffer), and the program
//! must run. The three outputs must be the same bytes: a mapped output's pages leave the mapping as they are
//! hashed, which must not change them.
//!
//! Skipped when `RIVET_TEST_LINKER` points at another linker.

mod common;

use common::tool_ok as run;
use object::read::elf::{ElfFile64, FileHeader};
use object::{LittleEndian, Object, ObjectSection};

#[test]
fn sha1_build_id_is_the_digest_of_the_image() {
    let Some((linker, dir)) = common::rivet_only(
        "build-id",
        &["gcc"],
        "rivet's build id over a multi-chunk image, gcc needed",
    ) else {
        return;
    };
    // 3 MiB of read-only data and 2 MiB of data between the code and the linker-made sections after them
    // (.eh_frame_hdr, .dynamic, .got), plus enough functions for a .symtab and .strtab of some size.
    let mut src = String::from(
        "#include <stdio.h>\n\
         const unsigned char table[3 << 20] = {1, 2, 3};\n\
         unsigned char data[2 << 20] = {4, 5, 6};\n",
    );
    for i in 0..2000 {
        src.push_str(&format!(
            "int f{i}(int x) {{ return x * {i} + table[{i}] + data[{i}]; }}\n"
        ));
    }
    src.push_str(
        "int main(void) {\n  int s = 0;\n  for (int i = 0; i < 3; i++) s += f1(i);\n  \
         printf(\"%d\\n\", s + table[1] + data[2]);\n  return 0;\n}\n",
    );
    std::fs::write(dir.join("big.c"), src).unwrap();
    run("gcc", &["-c", "-O1", "-fPIE", "big.c"], &dir);
    let shim = common::ld_shim_dir(&linker, "build-id");
    let shim_arg = format!("-B{}/", shim.display());
    // The mapped output's pages are released from the mapping as they are hashed (page-table entries dropped,
    // bytes kept in the page cache): the heap-buffered output, written with write(2), must have the same bytes.
    let mut images = Vec::new();
    for (kind, extra) in [
        ("new", None),
        ("over the old output", None),
        ("from a heap buffer", Some("-Wl,--no-mmap-output-file")),
    ] {
        let mut args = vec![
            shim_arg.as_str(),
            "-pie",
            "-Wl,--build-id=sha1",
            "-o",
            "prog",
            "big.o",
        ];
        args.extend(extra);
        let o = common::tool("gcc", &args, Some(&dir));
        assert!(o.success(), "link ({kind}) failed:\n{}", o.log());
        let ran = common::tool("./prog", &[], Some(&dir));
        assert_eq!(ran.stdout_str(), "32\n", "prog ({kind}):\n{}", ran.log());

        let mut image = std::fs::read(dir.join("prog")).unwrap();
        assert!(image.len() > 5 << 20, "the image is {} bytes", image.len());
        images.push((kind, image.clone()));
        let (off, size) = {
            let elf = ElfFile64::<LittleEndian>::parse(&image[..]).unwrap();
            assert!(elf.elf_header().is_little_endian());
            let note = elf
                .section_by_name(".note.gnu.build-id")
                .expect("a build id note");
            note.file_range().unwrap()
        };
        // namesz, descsz, type, "GNU\0", then the 20-byte id.
        assert_eq!(size, 16 + 20);
        let at = off as usize + 16;
        let id = image[at..at + 20].to_vec();
        image[at..at + 20].fill(0);
        let digest = blake3::hash(&image);
        assert_eq!(
            id,
            &digest.as_bytes()[..20],
            "build id ({kind}) is not the digest of the image"
        );
    }
    for (kind, image) in &images[1..] {
        assert!(
            *image == images[0].1,
            "the output linked {kind} differs from the new one"
        );
    }
}
