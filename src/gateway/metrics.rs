//! The gateway's counters, rendered in the Prometheus text format at `/metrics`
//! (requests by binding and method, refusals by the draft's condition code, upstream
//! latency, the bundle served). Labels come from fixed sets: nothing a caller sent
//! becomes a label value, so a caller cannot grow the set of series.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the upstream latency histogram, in seconds.
const BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

#[derive(Debug, Default)]
struct Counts {
    requests: BTreeMap<(&'static str, &'static str), u64>,
    refusals: BTreeMap<String, u64>,
    upstream_requests: BTreeMap<&'static str, u64>,
    latency_buckets: Vec<u64>,
    latency_sum: f64,
    latency_count: u64,
    reloads: BTreeMap<&'static str, u64>,
    cancels: BTreeMap<&'static str, u64>,
}

/// The gateway's metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    counts: Mutex<Counts>,
}

/// The bundle being served, for `skillbundle_gateway_bundle_info`.
pub struct BundleInfo<'a> {
    pub name: &'a str,
    pub version: &'a str,
    pub digest: &'a str,
}

fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Metrics {
    fn counts(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One A2A request on `binding` (`jsonrpc`, `http+json`) for `method` (an A2A
    /// operation name, or `other`).
    pub fn request(&self, binding: &'static str, method: &'static str) {
        *self.counts().requests.entry((binding, method)).or_default() += 1;
    }

    /// A request refused with `code` (a draft condition, or `extension_required`,
    /// `not_activated`, `parse_error`, `concurrency`).
    pub fn refusal(&self, code: &str) {
        *self.counts().refusals.entry(code.to_string()).or_default() += 1;
    }

    /// One exchange with the upstream, how long it took, and whether it answered.
    pub fn upstream(&self, took: Duration, ok: bool) {
        let mut c = self.counts();
        *c.upstream_requests
            .entry(if ok { "ok" } else { "error" })
            .or_default() += 1;
        if c.latency_buckets.is_empty() {
            c.latency_buckets = vec![0; BUCKETS.len()];
        }
        let secs = took.as_secs_f64();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                c.latency_buckets[i] += 1;
            }
        }
        c.latency_sum += secs;
        c.latency_count += 1;
    }

    /// A reload attempt's outcome (`loaded`, `unchanged`, `refused`).
    pub fn reload(&self, outcome: &'static str) {
        *self.counts().reloads.entry(outcome).or_default() += 1;
    }

    /// A CancelTask the gateway sent upstream for a Task it failed, by outcome (`ok`,
    /// `error`, `skipped`: too many already under way).
    pub fn cancel(&self, outcome: &'static str) {
        *self.counts().cancels.entry(outcome).or_default() += 1;
    }

    /// The Prometheus text exposition.
    pub fn render(&self, bundle: &BundleInfo<'_>, ready: bool) -> String {
        let c = self.counts();
        let mut out = String::new();
        let _ = writeln!(out, "# HELP skillbundle_gateway_requests_total A2A requests received, by binding and method.");
        let _ = writeln!(out, "# TYPE skillbundle_gateway_requests_total counter");
        for ((binding, method), n) in &c.requests {
            let _ = writeln!(out, "skillbundle_gateway_requests_total{{binding=\"{binding}\",method=\"{method}\"}} {n}");
        }
        let _ = writeln!(out, "# HELP skillbundle_gateway_refusals_total Requests and Tasks refused or failed by the gateway, by condition code.");
        let _ = writeln!(out, "# TYPE skillbundle_gateway_refusals_total counter");
        for (code, n) in &c.refusals {
            let _ = writeln!(
                out,
                "skillbundle_gateway_refusals_total{{code=\"{}\"}} {n}",
                label(code)
            );
        }
        let _ = writeln!(out, "# HELP skillbundle_gateway_upstream_requests_total Exchanges with the upstream agent, by outcome.");
        let _ = writeln!(
            out,
            "# TYPE skillbundle_gateway_upstream_requests_total counter"
        );
        for (outcome, n) in &c.upstream_requests {
            let _ = writeln!(
                out,
                "skillbundle_gateway_upstream_requests_total{{outcome=\"{outcome}\"}} {n}"
            );
        }
        let _ = writeln!(out, "# HELP skillbundle_gateway_upstream_seconds Time to the upstream agent's answer (a whole stream: to its first response).");
        let _ = writeln!(out, "# TYPE skillbundle_gateway_upstream_seconds histogram");
        for (i, bound) in BUCKETS.iter().enumerate() {
            let n = c.latency_buckets.get(i).copied().unwrap_or(0);
            let _ = writeln!(
                out,
                "skillbundle_gateway_upstream_seconds_bucket{{le=\"{bound}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "skillbundle_gateway_upstream_seconds_bucket{{le=\"+Inf\"}} {}",
            c.latency_count
        );
        let _ = writeln!(
            out,
            "skillbundle_gateway_upstream_seconds_sum {}",
            c.latency_sum
        );
        let _ = writeln!(
            out,
            "skillbundle_gateway_upstream_seconds_count {}",
            c.latency_count
        );
        let _ = writeln!(
            out,
            "# HELP skillbundle_gateway_reloads_total Bundle reload attempts, by outcome."
        );
        let _ = writeln!(out, "# TYPE skillbundle_gateway_reloads_total counter");
        for (outcome, n) in &c.reloads {
            let _ = writeln!(
                out,
                "skillbundle_gateway_reloads_total{{outcome=\"{outcome}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP skillbundle_gateway_upstream_cancels_total CancelTask requests sent upstream for Tasks the gateway failed, by outcome."
        );
        let _ = writeln!(
            out,
            "# TYPE skillbundle_gateway_upstream_cancels_total counter"
        );
        for (outcome, n) in &c.cancels {
            let _ = writeln!(
                out,
                "skillbundle_gateway_upstream_cancels_total{{outcome=\"{outcome}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "# HELP skillbundle_gateway_bundle_info The bundle being enforced."
        );
        let _ = writeln!(out, "# TYPE skillbundle_gateway_bundle_info gauge");
        let _ = writeln!(
            out,
            "skillbundle_gateway_bundle_info{{name=\"{}\",version=\"{}\",digest=\"{}\"}} 1",
            label(bundle.name),
            label(bundle.version),
            label(bundle.digest)
        );
        let _ = writeln!(out, "# HELP skillbundle_gateway_ready Whether the gateway is ready (bundle loaded, upstream card read).");
        let _ = writeln!(out, "# TYPE skillbundle_gateway_ready gauge");
        let _ = writeln!(out, "skillbundle_gateway_ready {}", u8::from(ready));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_a_cumulative_histogram() {
        let m = Metrics::default();
        m.request("jsonrpc", "SendMessage");
        m.refusal("input_invalid");
        m.upstream(Duration::from_millis(3), true);
        let text = m.render(
            &BundleInfo {
                name: "n",
                version: "1.0.0",
                digest: "sha256:x",
            },
            true,
        );
        assert!(text.contains(
            "skillbundle_gateway_requests_total{binding=\"jsonrpc\",method=\"SendMessage\"} 1"
        ));
        assert!(text.contains("skillbundle_gateway_refusals_total{code=\"input_invalid\"} 1"));
        assert!(text.contains("skillbundle_gateway_upstream_seconds_bucket{le=\"0.0025\"} 0"));
        assert!(text.contains("skillbundle_gateway_upstream_seconds_bucket{le=\"0.005\"} 1"));
        assert!(text.contains("skillbundle_gateway_upstream_seconds_count 1"));
    }
}
