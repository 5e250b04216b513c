//! Structure-aware mutation fuzzing of rivet's inputs (issue 34). Real objects, an archive, a shared object and a
//! version script are built from the program tests' sources (the seed corpus); each iteration mutates one input
//! file of one link job where the linker reads it (an ELF header field, a section header field, one symbol, one
//! relocation, a word of `.eh_frame`, a note, a group, a version section, an archive member, the version script's
//! text, a `-T` linker script's tokens), links, and classifies the outcome:
//! - `ok` (exit 0) and `rejected` (exit 1 with an error message) are what a linker may do;
//! - `panic`, `signal`, `hang` (over the time limit), `memory` (peak resident set over 1 GiB), `oversize` (an
//!   output taking over 64 MiB of disk, or a write killed by the 64 GiB file size limit) and `odd-exit` are
//!   findings. An output refused up front as too large (a clean error, nothing written) is a rejection.
//!
//! The linker scripts given with `-T` (GNU ld's defaults, and the embedded-style ones of `fuzz/seeds/script/` for
//! a freestanding program) change token by token: deleted, duplicated, swapped, numbers at the edges of 64 bits,
//! statements inserted (`. = . + N`, alignments, data commands, regions, `NOLOAD`, thousands of braces).
//!
//! The test fails on any finding and saves each under `<target>/rivet-tests/fuzz/findings/` with a script that
//! reproduces it. The iteration `i` of seed `s` is the same mutation on every machine, independent of threads, so a
//! finding is reproduced with `RIVET_FUZZ_SEED=s RIVET_FUZZ_FIRST=i RIVET_FUZZ_ITERS=1`.
//!
//! Environment:
//! - `RIVET_FUZZ_ITERS` (default 20000, two to five minutes on two cores): mutated links to run; `RIVET_FUZZ_FIRST` (default 0): first iteration.
//! - `RIVET_FUZZ_SEED` (default fixed): the mutation seed.
//! - `RIVET_FUZZ_JOBS`: comma-separated substrings of job names to run (`script` for the linker script jobs).
//! - `RIVET_FUZZ_BIN`: the linker to fuzz (for example a debug build, whose overflow checks find silent
//!   wrap-around); default the build under test.
//!
//! An output's size is the disk space it takes (a sparse file's holes are free), and a valid alignment in the
//! mutated input (up to 2^31, the limit lld and rivet enforce) justifies padding of a few times its size.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const TIME_LIMIT: Duration = Duration::from_secs(20);
const MAX_RSS_KIB: i64 = 1 << 20;
const MAX_OUTPUT: u64 = 64 << 20;
const FILE_SIZE_LIMIT: u64 = 1 << 36;

/// One link of the seed corpus: its arguments (with `{out}` for the output path) and the inputs a mutation may
/// change.
struct Job {
    name: &'static str,
    args: Vec<String>,
    mutable: Vec<PathBuf>,
}

#[test]
fn mutated_inputs_never_crash_the_linker() {
    let Some(dir) = setup_dir() else { return };
    let linker = std::env::var_os("RIVET_FUZZ_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| common::linker_under_test().0);
    let mut jobs = build_corpus(&dir);
    // RIVET_FUZZ_JOBS: comma-separated substrings of the job names to run (all by default).
    if let Ok(only) = std::env::var("RIVET_FUZZ_JOBS") {
        jobs.retain(|j| only.split(',').any(|w| j.name.contains(w)));
        assert!(!jobs.is_empty(), "no job matches RIVET_FUZZ_JOBS={only}");
    }
    for job in &jobs {
        let out = dir.join(format!("{}.check", job.name));
        let args = job_args(job, &out);
        let r = run_link(&linker, &args, &dir, 0);
        assert_eq!(
            r.class,
            Class::Ok,
            "seed job {} does not link: {}",
            job.name,
            r.stderr
        );
    }

    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let iters = env("RIVET_FUZZ_ITERS", 20_000) as usize;
    let first = env("RIVET_FUZZ_FIRST", 0) as usize;
    let seed = env("RIVET_FUZZ_SEED", 0x5eed_f022);
    let findings_dir = dir.join("findings");
    let next = AtomicUsize::new(first);
    let counts = Mutex::new(BTreeMap::<&'static str, usize>::new());
    let findings = Mutex::new(BTreeMap::<String, (usize, PathBuf)>::new());
    let start = Instant::now();
    std::thread::scope(|s| {
        for w in 0..common::jobs() {
            let (jobs, linker, dir, next) = (&jobs, &linker, &dir, &next);
            let (counts, findings, findings_dir) = (&counts, &findings, &findings_dir);
            s.spawn(move || {
                let scratch = dir.join(format!("worker{w}"));
                common::fresh_dir(&scratch);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= first + iters {
                        break;
                    }
                    let mut rng = Rng::new(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                    let job = &jobs[rng.below(jobs.len())];
                    let victim = &job.mutable[rng.below(job.mutable.len())];
                    let mut bytes = std::fs::read(victim).unwrap();
                    let what = mutate(&mut bytes, victim, &mut rng);
                    // The mutated copy replaces the original under the same name in the worker's directory.
                    let copy = scratch.join(victim.file_name().unwrap());
                    std::fs::write(&copy, &bytes).unwrap();
                    let out = scratch.join("out");
                    let _ = std::fs::remove_file(&out);
                    let args: Vec<String> = job_args(job, &out)
                        .into_iter()
                        .map(|a| {
                            if Path::new(&a) == victim {
                                copy.display().to_string()
                            } else {
                                a
                            }
                        })
                        .collect();
                    // A valid alignment of up to 2^31 justifies as much padding between input sections (GNU ld
                    // writes it too), a few times over; gaps between output sections are holes of a sparse file.
                    let justified = 4 * max_align(&bytes);
                    let r = run_link(linker, &args, &scratch, justified);
                    *counts.lock().unwrap().entry(r.class.name()).or_default() += 1;
                    if r.class.is_finding() {
                        let key = format!("{}: {}", r.class.name(), r.signature());
                        let saved =
                            save_finding(findings_dir, i, &copy, linker, &args, &r, &what, seed);
                        findings.lock().unwrap().entry(key).or_insert((i, saved));
                    }
                }
            });
        }
    });
    let elapsed = start.elapsed().as_secs_f64();
    eprintln!(
        "fuzz: seed {seed:#x}, iterations {first}..{}: {:?} in {elapsed:.0} s ({:.0} links/s)",
        first + iters,
        counts.lock().unwrap(),
        iters as f64 / elapsed
    );
    let findings = findings.into_inner().unwrap();
    for (key, (i, path)) in &findings {
        eprintln!(
            "finding (first at iteration {i}, saved in {}): {key}",
            path.display()
        );
    }
    assert!(findings.is_empty(), "{} distinct findings", findings.len());
}

fn setup_dir() -> Option<PathBuf> {
    for t in ["gcc", "g++", "ar"] {
        if !common::have_tool(t) {
            eprintln!("skipping: {t} not found");
            return None;
        }
    }
    let dir = common::work_root().join("fuzz");
    std::fs::create_dir_all(&dir).unwrap();
    Some(dir)
}

fn sh(dir: &Path, cmd: &str) {
    let st = Command::new("sh")
        .arg("-ec")
        .arg(cmd)
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(st.success(), "{cmd}");
}

fn print_file(name: &str) -> String {
    let o = Command::new("gcc")
        .arg(format!("-print-file-name={name}"))
        .output()
        .unwrap();
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Compiles the seed corpus (once per target directory) and returns the link jobs over it.
fn build_corpus(dir: &Path) -> Vec<Job> {
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let p = |s: &str| programs.join(s).display().to_string();
    let fuzz_seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let seeds = dir.join("seeds");
    if !seeds.join("done-3").exists() {
        common::fresh_dir(&seeds);
        let cmds = [
            format!(
                "gcc -O1 -fPIC -pthread -c {} -o tls_main.o",
                p("tls_models/main.c")
            ),
            format!(
                "gcc -O1 -fPIC -pthread -c {} -o tls_vars.o",
                p("tls_models/vars.c")
            ),
            format!("g++ -O1 -c {} -o cxx_a.o", p("comdat_cxx/a.cc")),
            format!("g++ -O1 -c {} -o cxx_b.o", p("comdat_cxx/b.cc")),
            format!("g++ -O1 -c {} -o cxx_main.o", p("comdat_cxx/main.cc")),
            format!(
                "gcc -O1 -fmerge-all-constants -c {} -o merge_main.o",
                p("string_merge/main.c")
            ),
            format!(
                "gcc -O1 -fmerge-all-constants -c {} -o merge_a.o",
                p("string_merge/a.c")
            ),
            format!(
                "gcc -O1 -fmerge-all-constants -c {} -o merge_b.o",
                p("string_merge/b.c")
            ),
            "ar rcs libmerge.a merge_a.o merge_b.o".to_string(),
            // An input linker script, as libc.so is one.
            "printf '/* GNU ld script */\\nOUTPUT_FORMAT(elf64-x86-64)\\nGROUP ( libmerge.a AS_NEEDED ( libmerge.a ) )\\n' > group.ld".to_string(),
            format!(
                "gcc -g -gz=zlib -c {} -o dbg_main.o",
                p("debug_info/main.c")
            ),
            format!(
                "gcc -g -Wa,--compress-debug-sections=zstd -c {} -o dbg_other.o",
                p("debug_info/other.c")
            ),
            format!("gcc -O1 -fPIC -c {} -o ver_lib.o", p("versioned_so/lib.c")),
            format!("cp {} ver.map", p("versioned_so/lib.map")),
            "gcc -shared -fuse-ld=bfd -o libver.so ver_lib.o -Wl,--version-script=ver.map".into(),
            format!("gcc -O1 -c {} -o ver_main.o", p("versioned_so/main.c")),
            format!("gcc -O1 -c {} -o ifunc_main.o", p("ifunc_static/main.c")),
            format!("gcc -O1 -c {} -o ifunc_impl.o", p("ifunc_static/impl.c")),
            // Linker scripts with SECTIONS: GNU ld's defaults, and embedded-style ones (MEMORY, AT>, NOLOAD,
            // data commands) for a freestanding program.
            "ld.bfd -pie --verbose | sed -n '/^=====/,/^=====/p' | sed '1d;$d' > default-pie.lds".into(),
            "ld.bfd --verbose | sed -n '/^=====/,/^=====/p' | sed '1d;$d' > default.lds".into(),
            format!("cp {}/*.lds .", fuzz_seeds.join("script").display()),
            format!(
                "gcc -O1 -ffreestanding -fno-stack-protector -fno-asynchronous-unwind-tables -fno-pie -c {} -o free.o",
                fuzz_seeds.join("freestanding.c").display()
            ),
        ];
        for c in &cmds {
            sh(&seeds, c);
        }
        std::fs::write(seeds.join("done-3"), "").unwrap();
    }
    let s = |f: &str| seeds.join(f).display().to_string();
    let gcc_dir = Path::new(&print_file("libgcc.a"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    let libstdcxx = Path::new(&print_file("libstdc++.so"))
        .parent()
        .unwrap()
        .display()
        .to_string();
    let pie = |objs: &[&str], libs: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = [
            "--no-fork",
            "-pie",
            "-z",
            "relro",
            "--eh-frame-hdr",
            "--hash-style=gnu",
            "--build-id",
            "-dynamic-linker",
            "/lib64/ld-linux-x86-64.so.2",
            "-o",
            "{out}",
        ]
        .map(String::from)
        .to_vec();
        a.extend(["Scrt1.o", "crti.o", "crtbeginS.o"].map(print_file));
        a.extend(objs.iter().map(|o| s(o)));
        a.push(format!("-L{gcc_dir}"));
        a.push(format!("-L{libstdcxx}"));
        a.extend(
            [
                "-L/usr/lib/x86_64-linux-gnu",
                "-L/lib/x86_64-linux-gnu",
                "-L/usr/lib",
                "-L/lib",
            ]
            .map(String::from),
        );
        a.extend(libs.iter().map(|l| l.to_string()));
        a.extend(
            [
                "-lgcc",
                "--as-needed",
                "-lgcc_s",
                "--no-as-needed",
                "-lc",
                "-lgcc",
            ]
            .map(String::from),
        );
        a.extend(["crtendS.o", "crtn.o"].map(print_file));
        a
    };
    let mutable = |fs: &[&str]| fs.iter().map(|f| seeds.join(f)).collect::<Vec<_>>();
    let with_script = |mut args: Vec<String>, script: &str| {
        args.extend(["-T".to_string(), s(script)]);
        args
    };
    let embedded = |name: &'static str, script: &str| Job {
        name,
        args: with_script(
            [
                "--no-fork",
                "-static",
                "-no-pie",
                "--build-id=none",
                "-o",
                "{out}",
                &s("free.o"),
            ]
            .map(String::from)
            .to_vec(),
            script,
        ),
        mutable: mutable(&[script]),
    };
    let static_args = {
        let mut a: Vec<String> = ["--no-fork", "-static", "--gc-sections", "-o", "{out}"]
            .map(String::from)
            .to_vec();
        a.extend(["crt1.o", "crti.o", "crtbeginT.o"].map(print_file));
        a.extend([s("ifunc_main.o"), s("ifunc_impl.o"), format!("-L{gcc_dir}")]);
        a.extend(["-L/usr/lib/x86_64-linux-gnu", "-L/usr/lib"].map(String::from));
        a.extend(["--start-group", "-lgcc", "-lgcc_eh", "-lc", "--end-group"].map(String::from));
        a.extend(["crtend.o", "crtn.o"].map(print_file));
        a
    };
    vec![
        Job {
            name: "tls",
            args: pie(&["tls_main.o", "tls_vars.o"], &[]),
            mutable: mutable(&["tls_main.o", "tls_vars.o"]),
        },
        Job {
            name: "cxx",
            args: pie(&["cxx_main.o", "cxx_a.o", "cxx_b.o"], &["-lstdc++", "-lm"]),
            mutable: mutable(&["cxx_main.o", "cxx_a.o", "cxx_b.o"]),
        },
        Job {
            name: "merge",
            args: pie(&["merge_main.o", "libmerge.a"], &[]),
            mutable: mutable(&["merge_main.o", "libmerge.a"]),
        },
        Job {
            name: "script",
            args: pie(&["merge_main.o", "group.ld"], &[]),
            mutable: mutable(&["group.ld"]),
        },
        Job {
            name: "debug",
            args: pie(&["dbg_main.o", "dbg_other.o"], &[]),
            mutable: mutable(&["dbg_main.o", "dbg_other.o"]),
        },
        Job {
            name: "versioned",
            args: pie(&["ver_main.o", "libver.so"], &[]),
            mutable: mutable(&["ver_main.o", "libver.so"]),
        },
        Job {
            name: "shared",
            args: [
                "--no-fork",
                "-shared",
                "--version-script",
                &s("ver.map"),
                "-o",
                "{out}",
                &s("ver_lib.o"),
            ]
            .map(String::from)
            .to_vec(),
            mutable: mutable(&["ver_lib.o", "ver.map"]),
        },
        Job {
            name: "static",
            args: static_args.clone(),
            mutable: mutable(&["ifunc_main.o", "ifunc_impl.o"]),
        },
        Job {
            name: "script-default-pie",
            args: with_script(pie(&["merge_main.o", "libmerge.a"], &[]), "default-pie.lds"),
            mutable: mutable(&["default-pie.lds"]),
        },
        Job {
            name: "script-default-static",
            args: with_script(static_args, "default.lds"),
            mutable: mutable(&["default.lds"]),
        },
        embedded("script-embedded", "embedded.lds"),
        embedded("script-embedded-at", "embedded_at.lds"),
        embedded("script-phdrs", "phdrs.lds"),
    ]
}

fn job_args(job: &Job, out: &Path) -> Vec<String> {
    job.args
        .iter()
        .map(|a| {
            if a == "{out}" {
                out.display().to_string()
            } else {
                a.clone()
            }
        })
        .collect()
}

// ---- mutations ----

/// splitmix64: small, fast, and the same sequence everywhere.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// A replacement for a field that held `old`: boundary values, powers of two, small steps and sizes of the file.
fn interesting(rng: &mut Rng, old: u64, file_len: u64) -> u64 {
    const FIXED: &[u64] = &[
        0,
        1,
        2,
        3,
        4,
        7,
        8,
        16,
        0x7f,
        0x80,
        0xff,
        0x100,
        0x7fff,
        0x8000,
        0xffff,
        0x1_0000,
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0004,
        0xffff_ffff,
        1 << 32,
        1 << 40,
        0x7fff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
        u64::MAX - 24,
        u64::MAX - 4095,
        u64::MAX,
    ];
    match rng.below(6) {
        0 | 1 => FIXED[rng.below(FIXED.len())],
        2 => old.wrapping_add(1 + rng.below(16) as u64),
        3 => old.wrapping_sub(1 + rng.below(16) as u64),
        4 => 1u64 << rng.below(64),
        _ => file_len.wrapping_add(rng.below(64) as u64).wrapping_sub(32),
    }
}

fn get(b: &[u8], at: usize, w: usize) -> u64 {
    let mut v = [0u8; 8];
    v[..w].copy_from_slice(&b[at..at + w]);
    u64::from_le_bytes(v)
}

fn put(b: &mut [u8], at: usize, w: usize, v: u64) {
    b[at..at + w].copy_from_slice(&v.to_le_bytes()[..w]);
}

/// Sets the `w`-byte field at `at` to an interesting value; describes the change.
fn set_field(b: &mut [u8], at: usize, w: usize, rng: &mut Rng, what: &str) -> String {
    if at + w > b.len() {
        return format!("{what}: out of file, unchanged");
    }
    let old = get(b, at, w);
    let new = interesting(rng, old, b.len() as u64);
    put(b, at, w, new);
    format!("{what} at {at:#x}: {old:#x} -> {:#x}", get(b, at, w))
}

/// Mutates `b` (the contents of `path`) once; returns what was done.
fn mutate(b: &mut Vec<u8>, path: &Path, rng: &mut Rng) -> String {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    if name.ends_with(".lds") {
        return mutate_script(b, rng);
    }
    if name.ends_with(".map") || name.ends_with(".ld") {
        return mutate_text(b, rng);
    }
    if b.starts_with(b"!<arch>\n") {
        let members = ar_members(b);
        if !members.is_empty() && rng.below(4) != 0 {
            let (hdr, range) = members[rng.below(members.len())].clone();
            if rng.below(3) == 0 {
                // The member header's decimal size field.
                return set_ascii(b, hdr + 48, 10, rng, "member size");
            }
            let mut m = b[range.clone()].to_vec();
            let what = mutate_elf(&mut m, rng);
            // A truncated member keeps its size in the archive: zeros fill the rest.
            m.resize(range.len(), 0);
            b[range.clone()].copy_from_slice(&m);
            return format!("member at {hdr:#x}: {what}");
        }
        return mutate_bytes(b, rng);
    }
    mutate_elf(b, rng)
}

fn mutate_elf(b: &mut Vec<u8>, rng: &mut Rng) -> String {
    if b.len() < 64 || rng.below(10) == 0 {
        return mutate_bytes(b, rng);
    }
    let shoff = get(b, 0x28, 8) as usize;
    let shnum = get(b, 0x3c, 2) as usize;
    let shdr = |i: usize| shoff + i * 64;
    let valid = shoff.checked_add(shnum * 64).is_some_and(|e| e <= b.len());
    match rng.below(8) {
        0 => {
            const FIELDS: &[(usize, usize, &str)] = &[
                (0x10, 2, "e_type"),
                (0x12, 2, "e_machine"),
                (0x20, 8, "e_phoff"),
                (0x28, 8, "e_shoff"),
                (0x3a, 2, "e_shentsize"),
                (0x3c, 2, "e_shnum"),
                (0x3e, 2, "e_shstrndx"),
                (0x05, 1, "EI_DATA"),
                (0x04, 1, "EI_CLASS"),
            ];
            let (at, w, what) = FIELDS[rng.below(FIELDS.len())];
            set_field(b, at, w, rng, what)
        }
        1..=2 if valid && shnum > 0 => {
            const FIELDS: &[(usize, usize, &str)] = &[
                (0, 4, "sh_name"),
                (4, 4, "sh_type"),
                (8, 8, "sh_flags"),
                (16, 8, "sh_addr"),
                (24, 8, "sh_offset"),
                (32, 8, "sh_size"),
                (40, 4, "sh_link"),
                (44, 4, "sh_info"),
                (48, 8, "sh_addralign"),
                (56, 8, "sh_entsize"),
            ];
            let i = rng.below(shnum);
            let (at, w, what) = FIELDS[rng.below(FIELDS.len())];
            if what == "sh_flags" && rng.below(2) == 0 {
                let bit = 1u64 << rng.below(12);
                let old = get(b, shdr(i) + at, 8);
                put(b, shdr(i) + at, 8, old ^ bit);
                return format!("section {i} sh_flags ^= {bit:#x}");
            }
            set_field(b, shdr(i) + at, w, rng, &format!("section {i} {what}"))
        }
        3..=6 if valid && shnum > 0 => {
            // Contents of one section, by what the section holds.
            let i = rng.below(shnum);
            let ty = get(b, shdr(i) + 4, 4) as u32;
            let off = get(b, shdr(i) + 24, 8) as usize;
            let size = get(b, shdr(i) + 32, 8) as usize;
            if ty == 8 || off.checked_add(size).is_none_or(|e| e > b.len()) || size == 0 {
                return mutate_bytes(b, rng);
            }
            let (entsize, fields): (usize, &[(usize, usize, &str)]) = match ty {
                // SHT_SYMTAB, SHT_DYNSYM
                2 | 11 => (
                    24,
                    &[
                        (0, 4, "st_name"),
                        (4, 1, "st_info"),
                        (5, 1, "st_other"),
                        (6, 2, "st_shndx"),
                        (8, 8, "st_value"),
                        (16, 8, "st_size"),
                    ],
                ),
                // SHT_RELA
                4 => (
                    24,
                    &[
                        (0, 8, "r_offset"),
                        (8, 4, "r_type"),
                        (12, 4, "r_sym"),
                        (16, 8, "r_addend"),
                    ],
                ),
                // SHT_DYNAMIC
                6 => (16, &[(0, 8, "d_tag"), (8, 8, "d_val")]),
                // SHT_GROUP, versions, hashes: words.
                17 | 0x6fff_fffd..=0x6fff_ffff | 5 | 0x6fff_fff6 => (4, &[(0, 4, "word")]),
                // .eh_frame, notes and the rest: a word of any width at an aligned offset.
                _ => {
                    let w = [1, 2, 4, 8][rng.below(4)];
                    if size < w {
                        return mutate_bytes(b, rng);
                    }
                    let at = off + rng.below(size / w) * w;
                    return set_field(b, at, w, rng, &format!("section {i} (type {ty:#x}) word"));
                }
            };
            if size < entsize {
                return mutate_bytes(b, rng);
            }
            let k = rng.below(size / entsize);
            let (at, w, what) = fields[rng.below(fields.len())];
            set_field(
                b,
                off + k * entsize + at,
                w,
                rng,
                &format!("section {i} entry {k} {what}"),
            )
        }
        _ => mutate_bytes(b, rng),
    }
}

/// Unstructured changes: flipped bytes, a truncation, a copied block.
fn mutate_bytes(b: &mut Vec<u8>, rng: &mut Rng) -> String {
    if b.is_empty() {
        return "empty".into();
    }
    match rng.below(4) {
        0 => {
            let n = rng.below(b.len());
            b.truncate(n);
            format!("truncated to {n}")
        }
        1 => {
            let len = 1 + rng.below(64.min(b.len()));
            let from = rng.below(b.len() - len + 1);
            let to = rng.below(b.len() - len + 1);
            b.copy_within(from..from + len, to);
            format!("copied {len} bytes from {from:#x} to {to:#x}")
        }
        _ => {
            let mut what = String::from("flipped");
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(b.len());
                b[at] ^= 1 << rng.below(8);
                what += &format!(" {at:#x}");
            }
            what
        }
    }
}

/// Rewrites a space-padded decimal field of `w` bytes at `at`.
fn set_ascii(b: &mut [u8], at: usize, w: usize, rng: &mut Rng, what: &str) -> String {
    if at + w > b.len() {
        return format!("{what}: out of file, unchanged");
    }
    let old: u64 = std::str::from_utf8(&b[at..at + w])
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    let new = interesting(rng, old, b.len() as u64) % 10_000_000_000;
    let s = format!("{new:<w$}");
    b[at..at + w].copy_from_slice(s.as_bytes());
    format!("{what} at {at:#x}: {old} -> {new}")
}

/// The largest valid alignment (a power of two up to 2^31) that the sections, compressed sections and common
/// symbols of an object or archive ask for.
fn max_align(b: &[u8]) -> u64 {
    if b.starts_with(b"!<arch>\n") {
        return ar_members(b)
            .into_iter()
            .map(|(_, r)| max_align(&b[r]))
            .max()
            .unwrap_or(0);
    }
    if b.len() < 64 || !b.starts_with(b"\x7fELF") {
        return 0;
    }
    let ok = |a: u64| {
        if a.is_power_of_two() && a <= 1 << 31 {
            a
        } else {
            0
        }
    };
    let (shoff, shnum) = (get(b, 0x28, 8) as usize, get(b, 0x3c, 2) as usize);
    let mut max = 0;
    for i in 0..shnum {
        let Some(h) = shoff
            .checked_add(i * 64)
            .filter(|h| h.checked_add(64).is_some_and(|e| e <= b.len()))
        else {
            break;
        };
        max = max.max(ok(get(b, h + 48, 8)));
        let (ty, flags) = (get(b, h + 4, 4), get(b, h + 8, 8));
        let (off, size) = (get(b, h + 24, 8) as usize, get(b, h + 32, 8) as usize);
        if flags & 0x800 != 0 && ty != 8 && off.checked_add(24).is_some_and(|e| e <= b.len()) {
            max = max.max(ok(get(b, off + 16, 8)));
        }
        if ty == 2 && off.checked_add(size).is_some_and(|e| e <= b.len()) {
            for k in 0..size / 24 {
                let e = off + k * 24;
                if get(b, e + 6, 2) == 0xfff2 {
                    max = max.max(ok(get(b, e + 8, 8)));
                }
            }
        }
    }
    max
}

/// The archive's members: header offset and data range.
fn ar_members(b: &[u8]) -> Vec<(usize, std::ops::Range<usize>)> {
    let mut v = Vec::new();
    let mut at = 8;
    while at + 60 <= b.len() {
        let size: usize = match std::str::from_utf8(&b[at + 48..at + 58])
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            Some(s) => s,
            None => break,
        };
        let data = at + 60..(at + 60 + size).min(b.len());
        if b[data.clone()].starts_with(b"\x7fELF") {
            v.push((at, data));
        }
        at += 60 + size + (size & 1);
    }
    v
}

fn mutate_text(b: &mut Vec<u8>, rng: &mut Rng) -> String {
    const TOKENS: &[&str] = &[
        "{",
        "}",
        ";",
        "*",
        "local:",
        "global:",
        "extern \"C++\"",
        "VERS_9",
        "\"",
        "#",
        "/*",
        "\0",
        "{{{{",
        "}}}}",
        "?",
        "[a-",
        "foo*;",
        "VERS_1",
        "GROUP",
        "INPUT",
        "AS_NEEDED",
        "(",
        ")",
        "-lc",
        "=/x",
    ];
    if b.is_empty() {
        b.extend_from_slice(b"{");
        return "empty".into();
    }
    let at = rng.below(b.len() + 1);
    match rng.below(4) {
        0 => {
            let end = (at + 1 + rng.below(16)).min(b.len());
            let at = at.min(end);
            b.drain(at..end);
            format!("deleted {at}..{end}")
        }
        1 => {
            let t = TOKENS[rng.below(TOKENS.len())];
            let n = if rng.below(8) == 0 {
                1 + rng.below(5000)
            } else {
                1
            };
            let ins = t.repeat(n);
            b.splice(at..at, ins.bytes());
            format!("inserted {t:?} x{n} at {at}")
        }
        2 => {
            let end = (at + 1 + rng.below(32)).min(b.len());
            let at = at.min(end);
            let chunk = b[at..end].to_vec();
            b.splice(end..end, chunk);
            format!("duplicated {at}..{end}")
        }
        _ => mutate_bytes(b, rng),
    }
}

/// A linker script's tokens (words, numbers, strings, comments, punctuation) and the spaces between them, in
/// order: the text is their concatenation.
fn script_tokens(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut v = Vec::new();
    let mut at = 0;
    while at < b.len() {
        let c = b[at];
        let len = if c.is_ascii_whitespace() {
            b[at..]
                .iter()
                .take_while(|c| c.is_ascii_whitespace())
                .count()
        } else if text[at..].starts_with("/*") {
            text[at..].find("*/").map_or(b.len() - at, |e| e + 2)
        } else if c == b'"' {
            text[at + 1..].find('"').map_or(b.len() - at, |e| e + 2)
        } else if c.is_ascii_alphanumeric() || b"_.$*?[]-/\\".contains(&c) {
            b[at..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || b"_.$*?[]-/\\".contains(c))
                .count()
        } else {
            // One character of punctuation (or of a multi-byte UTF-8 character, kept whole).
            text[at..].chars().next().map_or(1, char::len_utf8)
        };
        v.push(&text[at..at + len]);
        at += len;
    }
    v
}

/// Numbers a linker script may hold at the edges of what the linker computes with: zero, the signed and unsigned
/// limits, values just past them, huge alignments and sizes (a `. = . + N` of any of them in a section with
/// contents must end in an error or a bounded output, not a file of that size).
const SCRIPT_NUMBERS: &[&str] = &[
    "0",
    "1",
    "-1",
    "0x7fffffffffff",
    "0x800000000000",
    "0x7fffffffffffffff",
    "0x8000000000000000",
    "0xffffffffffffffff",
    "18446744073709551615",
    "18446744073709551616",
    "0x10000000000000000",
    "99999999999999999999999",
    "-0x8000000000000000",
    "0x100000000",
    "0x80000000",
    "4096",
    "3",
    "1K",
    "64M",
    "4096M",
    "0x40000000",
    "077",
    "0b101",
];

/// Statements and pieces a mutation inserts: the script commands (data commands, regions, `NOLOAD`, `AT>`,
/// location counter moves) with boundary values.
const SCRIPT_PIECES: &[&str] = &[
    ". = . + 0x7fffffffffff;",
    ". = . + 0x40000000;",
    ". = . + 0xffffffffffffffff;",
    ". = . - 0x1000;",
    ". = 0;",
    ". = 0xfffffffffffff000;",
    ". = ALIGN(0x8000000000000000);",
    ". = ALIGN(0);",
    ". = ALIGN(3);",
    ". = ALIGN(0x100000000);",
    "BYTE(0x1ff)",
    "QUAD(-1)",
    "SQUAD(0x8000000000000000)",
    "LONG(. - 1)",
    "FILL(0x90)",
    "> RAM",
    "> FLASH",
    "AT> FLASH",
    "AT(0xffffffffffffffff)",
    "(NOLOAD)",
    "(COPY)",
    "ALIGN(0x80000000)",
    "SUBALIGN(0x8000000000000000)",
    "ASSERT(. < 0x1000, \"far\");",
    "x = 1 / 0;",
    "y = 5 % 0;",
    "z = -0x8000000000000000 / -1;",
    "w = 1 << 64;",
    "v = ORIGIN(NOSUCH) + LENGTH(RAM);",
    "u = LOADADDR(.nosuch) + SIZEOF(.text) + ADDR(.data);",
    "PROVIDE(_start = .);",
    ".big : { BYTE(1) . = . + 0x7fffffffffff; }",
    ".huge (NOLOAD) : { . = . + 0x7fffffffffff; }",
    ".wrap : { . = 0xffffffffffffff00; QUAD(1) QUAD(2) . += 0x200; }",
    ".x : { *(.text*) *(.data*) *(*) }",
    "/DISCARD/ : { *(*) }",
    "KEEP(*(.text.start))",
    "*(COMMON)",
    "SORT_BY_ALIGNMENT(SORT_BY_NAME(.text*))",
    "EXCLUDE_FILE(*main*) *(.text)",
    "MEMORY { R (rwx) : ORIGIN = 0xfffffffffffff000, LENGTH = 0x2000 }",
    "MEMORY { Z : ORIGIN = 0, LENGTH = 0 }",
    "INCLUDE nosuch.lds",
    "INCLUDE embedded.lds",
    "INCLUDE default-pie.lds",
    "OVERLAY : { .o1 { *(.data) } .o2 { *(.bss) } }",
    "PHDRS { text PT_LOAD; }",
    ":text",
    "{",
    "}",
    "(",
    ")",
    ";",
    "=",
];

/// Token-level changes to a linker script (one, or now and then two or three): a token or run deleted, duplicated or swapped
/// with another, a number replaced by an edge value, a piece inserted (now and then repeated thousands of times).
fn mutate_script(b: &mut Vec<u8>, rng: &mut Rng) -> String {
    let mut text = String::from_utf8_lossy(b).into_owned();
    let mut what = Vec::new();
    // Mostly one change: a script with several is refused more often, before the layout is reached.
    let changes = if rng.below(4) == 0 {
        2 + rng.below(2)
    } else {
        1
    };
    for _ in 0..changes {
        let toks: Vec<String> = script_tokens(&text).into_iter().map(String::from).collect();
        let words: Vec<usize> = (0..toks.len())
            .filter(|&i| !toks[i].trim().is_empty())
            .collect();
        if words.is_empty() {
            text.push_str(SCRIPT_PIECES[rng.below(SCRIPT_PIECES.len())]);
            what.push("empty: inserted a piece".to_string());
            continue;
        }
        let mut toks = toks;
        let pick = |rng: &mut Rng| words[rng.below(words.len())];
        match rng.below(6) {
            0 => {
                let at = pick(rng);
                let n = 1 + rng.below(3);
                let end = (at + n).min(toks.len());
                what.push(format!("deleted {:?}", toks[at..end].concat()));
                toks.drain(at..end);
            }
            1 => {
                let at = pick(rng);
                let end = (at + 1 + rng.below(8)).min(toks.len());
                let run = toks[at..end].to_vec();
                what.push(format!("duplicated {:?}", run.concat()));
                toks.splice(end..end, run);
            }
            2 => {
                let (x, y) = (pick(rng), pick(rng));
                what.push(format!("swapped {:?} and {:?}", toks[x], toks[y]));
                toks.swap(x, y);
            }
            3 => {
                let numbers: Vec<usize> = words
                    .iter()
                    .copied()
                    .filter(|&i| toks[i].starts_with(|c: char| c.is_ascii_digit()))
                    .collect();
                let at = if numbers.is_empty() {
                    pick(rng)
                } else {
                    numbers[rng.below(numbers.len())]
                };
                let n = SCRIPT_NUMBERS[rng.below(SCRIPT_NUMBERS.len())];
                what.push(format!("{:?} -> {n}", toks[at]));
                toks[at] = n.to_string();
            }
            _ => {
                let at = pick(rng);
                let piece = SCRIPT_PIECES[rng.below(SCRIPT_PIECES.len())];
                let n = if rng.below(16) == 0 {
                    1 + rng.below(5000)
                } else {
                    1
                };
                what.push(format!("inserted {piece:?} x{n} before {:?}", toks[at]));
                toks.insert(at, format!(" {piece} ").repeat(n));
            }
        }
        text = toks.concat();
    }
    *b = text.into_bytes();
    what.join("; ")
}

// ---- running and classifying ----

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Ok,
    Rejected,
    Panic,
    Signal(i32),
    Hang,
    Memory,
    Oversize,
    OddExit(i32),
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::Rejected => "rejected",
            Class::Panic => "panic",
            Class::Signal(_) => "signal",
            Class::Hang => "hang",
            Class::Memory => "memory",
            Class::Oversize => "oversize",
            Class::OddExit(_) => "odd-exit",
        }
    }
    fn is_finding(self) -> bool {
        !matches!(self, Class::Ok | Class::Rejected)
    }
}

struct LinkResult {
    class: Class,
    stderr: String,
    max_rss_kib: i64,
}

impl LinkResult {
    /// What identifies a finding across inputs: the panic's location, or the class's own detail.
    fn signature(&self) -> String {
        if let Some(at) = self.stderr.find("panicked at ") {
            let rest = &self.stderr[at + 12..];
            return rest
                .lines()
                .next()
                .unwrap_or("")
                .trim_end_matches(':')
                .to_string();
        }
        match self.class {
            Class::Signal(s) => format!("signal {s}"),
            Class::OddExit(c) => format!("exit {c}"),
            Class::Memory => format!("{} MiB resident", self.max_rss_kib >> 10),
            _ => common::truncate_text(self.stderr.trim(), 200),
        }
    }
}

fn run_link(linker: &Path, args: &[String], dir: &Path, justified: u64) -> LinkResult {
    use std::os::unix::process::CommandExt;
    let err_path = dir.join("stderr");
    let mut cmd = Command::new(linker);
    cmd.args(args)
        .current_dir(dir)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&err_path).unwrap());
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: FILE_SIZE_LIMIT,
                rlim_max: FILE_SIZE_LIMIT,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            Ok(())
        });
    }
    let child = cmd.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let start = Instant::now();
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut timed_out = false;
    let mut pause = Duration::from_micros(200);
    loop {
        // SAFETY: waits for our own child, writing into locals.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        if start.elapsed() > TIME_LIMIT && !timed_out {
            timed_out = true;
            // SAFETY: signals our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
    std::mem::forget(child);
    let stderr =
        String::from_utf8_lossy(&std::fs::read(&err_path).unwrap_or_default()).into_owned();
    let out_size = args
        .iter()
        .position(|a| a == "-o")
        .and_then(|i| std::fs::metadata(&args[i + 1]).ok())
        .map_or(0, |m| std::os::unix::fs::MetadataExt::blocks(&m) * 512);
    let class = if timed_out {
        Class::Hang
    } else if stderr.contains("panicked") {
        Class::Panic
    } else if libc::WIFSIGNALED(status) {
        match libc::WTERMSIG(status) {
            libc::SIGXFSZ if justified < FILE_SIZE_LIMIT => Class::Oversize,
            libc::SIGXFSZ => Class::Rejected,
            s => Class::Signal(s),
        }
    } else if usage.ru_maxrss > MAX_RSS_KIB + (justified >> 10) as i64 {
        Class::Memory
    } else if out_size > MAX_OUTPUT + justified {
        Class::Oversize
    } else {
        match libc::WEXITSTATUS(status) {
            0 => Class::Ok,
            1 if stderr.contains("error") => Class::Rejected,
            c => Class::OddExit(c),
        }
    };
    LinkResult {
        class,
        stderr,
        max_rss_kib: usage.ru_maxrss,
    }
}

#[allow(clippy::too_many_arguments)]
fn save_finding(
    root: &Path,
    i: usize,
    input: &Path,
    linker: &Path,
    args: &[String],
    r: &LinkResult,
    what: &str,
    seed: u64,
) -> PathBuf {
    let d = root.join(format!("{}-{i}", r.class.name()));
    common::fresh_dir(&d);
    let copy = d.join(input.file_name().unwrap());
    std::fs::copy(input, &copy).unwrap();
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if Path::new(a) == input {
                copy.display().to_string()
            } else if a.ends_with("/out") {
                d.join("out").display().to_string()
            } else {
                a.clone()
            }
        })
        .collect();
    let script = format!(
        "#!/bin/sh\n# seed {seed:#x} iteration {i}: {what}\n# {}: {}\n{} {}\n",
        r.class.name(),
        r.signature(),
        linker.display(),
        args.join(" ")
    );
    std::fs::write(d.join("repro.sh"), script).unwrap();
    d
}

/// The cargo-fuzz crate (`fuzz/`) compiles rivet's source as a library, so it must list rivet's dependencies as
/// they are here.
#[test]
fn fuzz_crate_lists_rivets_dependencies() {
    let deps = |path: &str| -> Vec<String> {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
        let (_, rest) = text.split_once("[dependencies]\n").unwrap();
        rest.lines()
            .take_while(|l| !l.starts_with('['))
            .filter(|l| {
                !l.trim().is_empty() && !l.starts_with('#') && !l.starts_with("libfuzzer-sys")
            })
            .map(String::from)
            .collect()
    };
    assert_eq!(deps("fuzz/Cargo.toml"), deps("Cargo.toml"));
}
