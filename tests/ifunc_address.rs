//! One canonical address per IFUNC in every kind of executable: the address taken in the defining file (a
//! PC-relative `lea`, the stub), in another file (a GOT load under `-fPIE`), and stored in data (a relative or
//! IRELATIVE dynamic relocation) must compare equal. GNU ld gives a PIE's GOT loads and data pointers the
//! resolver's result but the defining file's `lea` the stub, so this is checked for rivet alone (the program
//! cases compare with GNU ld's output).

mod common;

const IMPL: &str = "static int generic(int x) { return x + 1; }\n\
    static int (*resolve(void))(int) { return generic; }\n\
    int add_one(int x) __attribute__((ifunc(\"resolve\")));\n\
    int (*from_data_here)(int) = add_one;\n\
    int (*taken_here(void))(int) { return add_one; }\n";
const MAIN: &str = "#include <stdio.h>\nint add_one(int x);\nextern int (*from_data_here)(int);\n\
    int (*taken_here(void))(int);\nint (*from_data_there)(int) = add_one;\n\
    int main(void) {\n  int (*there)(int) = add_one;\n\
    printf(\"%d %d %d %d\\n\", there == taken_here(), there == from_data_here, there == from_data_there,\n\
    add_one(41));\n  return 0;\n}\n";

#[test]
fn ifunc_has_one_address_in_every_executable_kind() {
    let Some((linker, dir)) =
        common::rivet_only("ifunc-address", &["gcc"], "rivet's own rule, gcc needed")
    else {
        return;
    };
    std::fs::write(dir.join("impl.c"), IMPL).unwrap();
    std::fs::write(dir.join("main.c"), MAIN).unwrap();
    let shim = common::ld_shim_dir(&linker, "ifunc-address");
    let b = format!("-B{}/", shim.display());
    for (kind, cflag) in [
        ("-static-pie", "-fPIE"),
        ("-pie", "-fPIE"),
        ("-static", "-fPIE"),
        ("-no-pie", "-fno-pie"),
    ] {
        for extra in [None, Some("-Wl,-z,pack-relative-relocs")] {
            common::tool_ok("gcc", &[cflag, "-O2", "-c", "impl.c", "main.c"], &dir);
            let mut args = vec![b.as_str(), kind, "-o", "prog", "impl.o", "main.o"];
            args.extend(extra);
            let o = common::tool("gcc", &args, Some(&dir));
            assert!(o.success(), "{kind} {extra:?}:\n{}", o.log());
            let out = std::process::Command::new(dir.join("prog"))
                .output()
                .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&out.stdout),
                "1 1 1 42\n",
                "{kind} {extra:?}: addresses of the IFUNC differ"
            );
        }
    }
}
