//! Phase timing: `--print-timing` prints a tree of phases to stderr with each one's wall time and the CPU time
//! (user + system, all threads) the process spent in it, so their ratio shows how well a phase runs in parallel;
//! `--time-trace[=FILE]` writes the same spans as a Chrome trace (chrome://tracing, Perfetto, speedscope), like
//! lld's option of that name, with the CPU time as an argument of each event.
//!
//! Each span also records the resident set when it ends, split into anonymous memory (heap, thread stacks) and
//! file pages (the mapped inputs and output), read from `/proc/self/statm`, and the report ends with the peak
//! (`VmHWM`): that shows which phase's data structures the peak memory is made of.
//!
//! Spans are opened on the main thread only (a phase is a sequential step that may itself run in parallel), so
//! nesting is the order of `span` calls. When neither option is given, a span costs one relaxed atomic load.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Instant;

static ENABLED: AtomicBool = AtomicBool::new(false);
static STATE: Mutex<Option<State>> = Mutex::new(None);

struct State {
    origin: Instant,
    depth: u32,
    /// Completed and open spans in start order.
    spans: Vec<SpanRecord>,
}

struct SpanRecord {
    name: &'static str,
    depth: u32,
    start_us: f64,
    /// Process CPU time at the start.
    cpu_start_us: f64,
    /// Measurements once closed.
    done: Option<Done>,
}

#[derive(Clone, Copy, Default)]
struct Done {
    wall_us: f64,
    cpu_us: f64,
    /// Resident set at the end of the span, in KiB: anonymous and file-backed.
    anon_kib: u64,
    file_kib: u64,
}

/// The resident set now, in KiB: (anonymous, file-backed). Zero where /proc is unavailable.
fn rss_kib() -> (u64, u64) {
    let Ok(s) = std::fs::read_to_string("/proc/self/statm") else {
        return (0, 0);
    };
    let mut it = s
        .split_ascii_whitespace()
        .skip(1)
        .map(|x| x.parse::<u64>().unwrap_or(0));
    let (resident, shared) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
    // SAFETY: sysconf has no preconditions.
    let page_kib = (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) / 1024) as u64;
    (
        resident.saturating_sub(shared) * page_kib,
        shared * page_kib,
    )
}

/// The peak resident set (`VmHWM`) in KiB.
fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// User + system CPU time of the whole process so far, in µs.
fn cpu_us() -> f64 {
    // SAFETY: getrusage writes only into the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    us(ru.ru_utime) + us(ru.ru_stime)
}

pub fn enable() {
    *STATE.lock().unwrap_or_else(|e| e.into_inner()) = Some(State {
        origin: Instant::now(),
        depth: 0,
        spans: Vec::new(),
    });
    ENABLED.store(true, Relaxed);
}

/// Ends its span when dropped.
pub struct Span(Option<usize>);

/// Opens a span named `name` that ends when the returned guard is dropped.
#[must_use = "the span ends when this guard is dropped"]
pub fn span(name: &'static str) -> Span {
    if !ENABLED.load(Relaxed) {
        return Span(None);
    }
    let mut g = STATE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(st) = g.as_mut() else {
        return Span(None);
    };
    let start = st.origin.elapsed().as_secs_f64() * 1e6;
    st.spans.push(SpanRecord {
        name,
        depth: st.depth,
        start_us: start,
        cpu_start_us: cpu_us(),
        done: None,
    });
    st.depth += 1;
    Span(Some(st.spans.len() - 1))
}

impl Drop for Span {
    fn drop(&mut self) {
        let Some(i) = self.0 else { return };
        let mut g = STATE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(st) = g.as_mut() {
            let now = st.origin.elapsed().as_secs_f64() * 1e6;
            let (anon_kib, file_kib) = rss_kib();
            let s = &mut st.spans[i];
            s.done = Some(Done {
                wall_us: now - s.start_us,
                cpu_us: cpu_us() - s.cpu_start_us,
                anon_kib,
                file_kib,
            });
            st.depth = st.depth.saturating_sub(1);
        }
    }
}

/// (name, depth, start µs, measurements) of every span.
fn take() -> Vec<(&'static str, u32, f64, Done)> {
    let g = STATE.lock().unwrap_or_else(|e| e.into_inner());
    g.as_ref().map_or_else(Vec::new, |st| {
        st.spans
            .iter()
            .map(|r| (r.name, r.depth, r.start_us, r.done.unwrap_or_default()))
            .collect()
    })
}

/// The `--print-timing` report: one line per span with its wall and CPU milliseconds and the resident set at its
/// end (anonymous + file-backed MiB), indented by nesting, then the peak resident set.
pub fn report() -> String {
    let mut out = String::from("rivet:   wall ms    cpu ms  anon MiB  file MiB  phase\n");
    let mib = |kib: u64| kib as f64 / 1024.0;
    for (name, depth, _, d) in take() {
        out.push_str(&format!(
            "rivet: {:>9.2} {:>9.2} {:>9.1} {:>9.1}  {:indent$}{name}\n",
            d.wall_us / 1e3,
            d.cpu_us / 1e3,
            mib(d.anon_kib),
            mib(d.file_kib),
            "",
            indent = 2 * depth as usize
        ));
    }
    out.push_str(&format!(
        "rivet: peak resident set {:.1} MiB\n",
        mib(peak_kib())
    ));
    out
}

/// The Chrome trace-event JSON of every span ("X" complete events on one thread).
pub fn chrome_trace() -> String {
    let mut out = String::from("{\"traceEvents\":[\n");
    let spans = take();
    for (k, (name, _, start, d)) in spans.iter().enumerate() {
        out.push_str(&format!(
            "{{\"name\":\"{name}\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":{start:.1},\"dur\":{:.1},\"args\":{{\"cpu_ms\":{:.3},\"anon_mib\":{:.1},\"file_mib\":{:.1}}}}}{}\n",
            d.wall_us,
            d.cpu_us / 1e3,
            d.anon_kib as f64 / 1024.0,
            d.file_kib as f64 / 1024.0,
            if k + 1 == spans.len() { "" } else { "," }
        ));
    }
    out.push_str("],\"displayTimeUnit\":\"ms\"}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_spans_report_and_trace() {
        enable();
        {
            let _a = span("outer");
            let _b = span("inner");
        }
        let r = report();
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines.len(), 4, "{r}");
        assert!(lines[3].starts_with("rivet: peak resident set "), "{r}");
        assert!(
            lines[1].ends_with(" outer") && lines[2].ends_with("   inner"),
            "{r}"
        );
        let t = chrome_trace();
        assert!(t.contains("\"name\":\"outer\"") && t.contains("\"name\":\"inner\""));
        assert!(t.trim_end().ends_with('}'));
    }
}
