//! Phase timing: `--print-timing` prints a tree of phase wall times to stderr; `--time-trace[=FILE]` writes the
//! same spans as a Chrome trace (chrome://tracing, Perfetto, speedscope), like lld's option of that name.
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
    /// Completed and open spans in start order: (name, depth, start µs, duration µs; `None` while open).
    spans: Vec<(&'static str, u32, f64, Option<f64>)>,
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
    st.spans.push((name, st.depth, start, None));
    st.depth += 1;
    Span(Some(st.spans.len() - 1))
}

impl Drop for Span {
    fn drop(&mut self) {
        let Some(i) = self.0 else { return };
        let mut g = STATE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(st) = g.as_mut() {
            let now = st.origin.elapsed().as_secs_f64() * 1e6;
            let s = &mut st.spans[i];
            s.3 = Some(now - s.2);
            st.depth = st.depth.saturating_sub(1);
        }
    }
}

fn take() -> Vec<(&'static str, u32, f64, f64)> {
    let g = STATE.lock().unwrap_or_else(|e| e.into_inner());
    g.as_ref().map_or_else(Vec::new, |st| {
        st.spans
            .iter()
            .map(|&(n, d, s, len)| (n, d, s, len.unwrap_or(0.0)))
            .collect()
    })
}

/// The `--print-timing` report: one line per span, indented by nesting.
pub fn report() -> String {
    let mut out = String::new();
    for (name, depth, _, dur) in take() {
        out.push_str(&format!(
            "rivet: {:>9.2} ms  {:indent$}{name}\n",
            dur / 1e3,
            "",
            indent = 2 * depth as usize
        ));
    }
    out
}

/// The Chrome trace-event JSON of every span ("X" complete events on one thread).
pub fn chrome_trace() -> String {
    let mut out = String::from("{\"traceEvents\":[\n");
    let spans = take();
    for (k, (name, _, start, dur)) in spans.iter().enumerate() {
        out.push_str(&format!(
            "{{\"name\":\"{name}\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":{start:.1},\"dur\":{dur:.1}}}{}\n",
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
        assert_eq!(lines.len(), 2, "{r}");
        assert!(
            lines[0].ends_with(" outer") && lines[1].ends_with("   inner"),
            "{r}"
        );
        let t = chrome_trace();
        assert!(t.contains("\"name\":\"outer\"") && t.contains("\"name\":\"inner\""));
        assert!(t.trim_end().ends_with('}'));
    }
}
