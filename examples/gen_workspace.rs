//! Generate a synthetic skillbundle workspace of N skills, for benchmarks (`bench/run`).
//!
//! ```sh
//! cargo run --release --example gen_workspace -- N DIR [--shape large]
//! ```
//!
//! Writes `DIR/skillbundle.yaml` and `DIR/skills/skill-NNNNN/` for N skills. Each skill has
//! an input, an output and one supporting-record schema (`schemas/*.schema.json`, so a peer
//! tool can select them by extension; draft 2020-12, 1–3 KB each, with
//! `$defs` and internal `$ref`s, `format`s and `pattern`s) and, per schema, two valid and
//! two invalid examples (the first invalid one pins its failure with an `.expect.yaml`).
//! It also writes `DIR/peer-tests/skill-NNNNN/<role>.json`: the same examples as test
//! suites in the format of the sourcemeta JSON Schema CLI's `jsonschema test` (`target`
//! and `dataPath` relative to the test file), so the peer validates exactly the same files.
//!
//! `--shape large` makes a second workload: each schema also gets an `attributes` object
//! of 40 optional, typed properties (`$defs/attributes`, 6–12 KB a schema), and each schema
//! four more examples (two valid with attributes, two invalid), so 24 per skill.
//!
//! The output depends only on N and the shape: every choice comes from a small PRNG
//! seeded with the skill's index, so skill k is the same whatever N is. Every skill passes
//! `skillbundle check`; the generator itself refuses (panics) if a schema falls outside
//! 1–3 KB. DIR must not exist yet or be empty, so a stale workspace is never mixed in.
//!
//! It lives in `examples/` because it is a development tool: it is compiled and linted
//! with the tests (so it cannot rot) but is not part of the installed `skillbundle`.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// splitmix64: tiny, deterministic, good enough to vary synthetic data.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const METRICS: &[&str] = &[
    "utilization",
    "latency",
    "jitter",
    "packet_loss",
    "throughput",
    "error_rate",
    "temperature",
    "power_draw",
];
const UNITS: &[&str] = &["percent", "ms", "bps", "pps", "celsius", "watts"];
const DOMAINS: &[&str] = &["core", "edge", "access", "transport", "dc", "wan"];
const MODES: &[&str] = &["sync", "stream", "poll", "push"];
const AUTHORITY: &[&str] = &["observe_only", "recommend_only", "execute"];

/// Everything that varies between skills, drawn once per skill.
struct Skill {
    index: usize,
    large: bool,
    dir: String,
    id: String,
    domain: &'static str,
    metric: &'static str,
    unit: &'static str,
    /// Digits in a resource id (`res-` + this many digits, give or take).
    id_digits: (u64, u64),
    max_value: u64,
    max_items: u64,
    rng: Rng,
}

impl Skill {
    fn new(index: usize, large: bool) -> Skill {
        let mut rng = Rng::new(index as u64);
        let lo = 3 + rng.below(3);
        Skill {
            index,
            large,
            dir: format!("skill-{index:05}"),
            id: format!("bench_skill_{index:05}"),
            domain: rng.pick(DOMAINS),
            metric: rng.pick(METRICS),
            unit: rng.pick(UNITS),
            id_digits: (lo, lo + 2 + rng.below(4)),
            max_value: 100 + rng.below(10_000),
            max_items: 4 + rng.below(12),
            rng,
        }
    }

    /// The units a threshold or finding may use: the skill's own, and percent.
    fn units(&self) -> Vec<&'static str> {
        if self.unit == "percent" {
            vec!["percent"]
        } else {
            vec![self.unit, "percent"]
        }
    }

    fn uri(&self, what: &str) -> String {
        format!("urn:bench:{}:{}:{what}", self.domain, self.id)
    }

    fn resource_id(&mut self) -> String {
        let (lo, _) = self.id_digits;
        let n = self.rng.below(10u64.pow(lo as u32));
        format!("res-{n:0width$}", width = lo as usize)
    }

    fn resource_def(&self) -> Value {
        let (lo, hi) = self.id_digits;
        json!({
            "description": format!("A {} resource, addressed by id and optionally by address or host name.", self.domain),
            "type": "object",
            "properties": {
                "id": {"type": "string", "pattern": format!("^res-[0-9]{{{lo},{hi}}}$")},
                "address": {"anyOf": [
                    {"type": "string", "format": "ipv4"},
                    {"type": "string", "format": "ipv6"}
                ]},
                "host": {"type": "string", "format": "hostname", "maxLength": 253},
                "vrf": {"$ref": "#/$defs/name"}
            },
            "required": ["id"],
            "additionalProperties": false
        })
    }

    fn name_def() -> Value {
        json!({"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_-]{0,31}$"})
    }

    fn input_schema(&self) -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": self.uri("input"),
            "title": format!("{}: input", self.id),
            "description": format!("Evaluate the {} of {} resources against thresholds.", self.metric, self.domain),
            "type": "object",
            "properties": {
                "request_id": {"type": "string", "format": "uuid"},
                "target": {"$ref": "#/$defs/resource"},
                "window": {"$ref": "#/$defs/window"},
                "thresholds": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/threshold"},
                    "minItems": 1,
                    "maxItems": self.max_items
                },
                "notify": {"type": "string", "format": "email"},
                "dry_run": {"type": "boolean", "default": false}
            },
            "required": ["request_id", "target", "thresholds"],
            "additionalProperties": false,
            "$defs": {
                "name": Skill::name_def(),
                "resource": self.resource_def(),
                "window": {
                    "type": "object",
                    "properties": {
                        "not_before": {"type": "string", "format": "date-time"},
                        "not_after": {"type": "string", "format": "date-time"}
                    },
                    "required": ["not_before", "not_after"],
                    "additionalProperties": false
                },
                "threshold": {
                    "type": "object",
                    "properties": {
                        "metric": {"const": self.metric},
                        "comparison": {"enum": ["gt", "ge", "lt", "le", "eq"]},
                        "value": {"type": "number", "minimum": 0, "maximum": self.max_value},
                        "unit": {"enum": self.units()}
                    },
                    "required": ["metric", "comparison", "value"],
                    "additionalProperties": false
                }
            }
        })
    }

    fn output_schema(&self) -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": self.uri("output"),
            "title": format!("{}: output", self.id),
            "type": "object",
            "properties": {
                "request_id": {"type": "string", "format": "uuid"},
                "result": {"enum": ["met", "not_met", "unknown"]},
                "evaluated_at": {"type": "string", "format": "date-time"},
                "findings": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/finding"},
                    "maxItems": self.max_items
                },
                "report": {"type": "string", "format": "uri"}
            },
            "required": ["request_id", "result", "evaluated_at"],
            "additionalProperties": false,
            "$defs": {
                "name": Skill::name_def(),
                "resource": self.resource_def(),
                "finding": {
                    "type": "object",
                    "properties": {
                        "resource": {"$ref": "#/$defs/resource"},
                        "observed": {"type": "number"},
                        "unit": {"enum": self.units()},
                        "severity": {"enum": ["info", "minor", "major", "critical"]},
                        "code": {"type": "string", "pattern": "^[A-Z]{2,4}-[0-9]{3}$"}
                    },
                    "required": ["resource", "observed", "severity"],
                    "additionalProperties": false
                }
            }
        })
    }

    fn record_schema(&self) -> Value {
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": self.uri("observation"),
            "title": format!("{}: observation record", self.id),
            "type": "object",
            "properties": {
                "observation_id": {"type": "string", "format": "uuid"},
                "resource": {"$ref": "#/$defs/resource"},
                "metric": {"const": self.metric},
                "samples": {
                    "type": "array",
                    "items": {"$ref": "#/$defs/sample"},
                    "minItems": 1
                },
                "collector": {"type": "string", "format": "hostname"}
            },
            "required": ["observation_id", "resource", "metric", "samples"],
            "additionalProperties": false,
            "$defs": {
                "name": Skill::name_def(),
                "resource": self.resource_def(),
                "sample": {
                    "type": "object",
                    "properties": {
                        "at": {"type": "string", "format": "date-time"},
                        "value": {"type": "number", "minimum": 0},
                        "sequence": {"type": "integer", "minimum": 0}
                    },
                    "required": ["at", "value"],
                    "additionalProperties": false
                }
            }
        })
    }

    fn uuid(&mut self) -> String {
        let a = self.rng.next();
        let b = self.rng.next();
        format!(
            "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xfff,
            8 + (b >> 62),
            (b >> 48) & 0xfff,
            b & 0xffff_ffff_ffff
        )
    }

    fn timestamp(&mut self) -> String {
        let day = 1 + self.rng.below(28);
        let hour = self.rng.below(24);
        let minute = self.rng.below(60);
        format!(
            "2026-0{}-{day:02}T{hour:02}:{minute:02}:00Z",
            1 + self.rng.below(9)
        )
    }

    fn resource(&mut self, with_address: bool) -> Value {
        let mut r = json!({"id": self.resource_id()});
        if with_address {
            if self.rng.below(2) == 0 {
                r["address"] = json!(format!(
                    "10.{}.{}.{}",
                    self.rng.below(256),
                    self.rng.below(256),
                    1 + self.rng.below(254)
                ));
            } else {
                r["address"] = json!(format!("2001:db8::{:x}", 1 + self.rng.below(0xfffe)));
            }
            r["host"] = json!(format!("{}-{}.example.net", self.domain, self.index));
        }
        r
    }

    fn threshold(&mut self) -> Value {
        let value = self.rng.below(self.max_value);
        json!({"metric": self.metric, "comparison": "ge", "value": value, "unit": self.unit})
    }

    /// Two valid and two invalid examples per schema: (file stem, valid, value, pin).
    fn input_examples(&mut self) -> Vec<Example> {
        let full = json!({
            "request_id": self.uuid(),
            "target": self.resource(true),
            "window": {"not_before": self.timestamp(), "not_after": self.timestamp()},
            "thresholds": [self.threshold(), self.threshold()],
            "notify": format!("noc+{}@example.net", self.index),
            "dry_run": true
        });
        let minimal = json!({
            "request_id": self.uuid(),
            "target": self.resource(false),
            "thresholds": [self.threshold()]
        });
        let mut missing = minimal.clone();
        missing.as_object_mut().unwrap().remove("thresholds");
        let mut bad_time = full.clone();
        bad_time["window"]["not_after"] = json!("yesterday at noon");
        vec![
            Example::valid("full", full),
            Example::valid("minimal", minimal),
            Example::invalid("missing-thresholds", missing, Some(("required", ""))),
            Example::invalid("window-not-a-timestamp", bad_time, None),
        ]
    }

    fn output_examples(&mut self) -> Vec<Example> {
        let finding = json!({
            "resource": self.resource(true),
            "observed": self.rng.below(1000) as f64 / 4.0,
            "unit": self.unit,
            "severity": "minor",
            "code": format!("NET-{:03}", self.rng.below(1000))
        });
        let met = json!({
            "request_id": self.uuid(),
            "result": "met",
            "evaluated_at": self.timestamp(),
            "findings": [finding],
            "report": format!("https://reports.example.net/{}/{}", self.domain, self.index)
        });
        let unknown = json!({
            "request_id": self.uuid(),
            "result": "unknown",
            "evaluated_at": self.timestamp()
        });
        let mut bad_result = unknown.clone();
        bad_result["result"] = json!("maybe");
        let mut bad_code = met.clone();
        bad_code["findings"][0]["code"] = json!("net-1");
        vec![
            Example::valid("met", met),
            Example::valid("unknown", unknown),
            Example::invalid("result-outside-enum", bad_result, Some(("enum", "/result"))),
            Example::invalid("finding-code-pattern", bad_code, None),
        ]
    }

    fn record_examples(&mut self) -> Vec<Example> {
        let samples: Vec<Value> = (0..3)
            .map(|seq| {
                json!({"at": self.timestamp(), "value": self.rng.below(100), "sequence": seq})
            })
            .collect();
        let full = json!({
            "observation_id": self.uuid(),
            "resource": self.resource(true),
            "metric": self.metric,
            "samples": samples,
            "collector": format!("collector-{}.example.net", self.index % 7)
        });
        let one = json!({
            "observation_id": self.uuid(),
            "resource": self.resource(false),
            "metric": self.metric,
            "samples": [{"at": self.timestamp(), "value": 0}]
        });
        let mut no_samples = one.clone();
        no_samples["samples"] = json!([]);
        let mut bad_id = full.clone();
        bad_id["resource"]["id"] = json!("resource-1");
        vec![
            Example::valid("three-samples", full),
            Example::valid("one-sample", one),
            Example::invalid("no-samples", no_samples, Some(("minItems", "/samples"))),
            Example::invalid("resource-id-pattern", bad_id, None),
        ]
    }

    fn manifest(&mut self) -> String {
        let modes: Vec<&str> = MODES
            .iter()
            .copied()
            .filter(|_| self.rng.below(2) == 0)
            .collect();
        let modes = if modes.is_empty() {
            "sync".to_string()
        } else {
            modes.join(", ")
        };
        let authority = self.rng.pick(AUTHORITY);
        format!(
            r#"skill_id: {id}
skill_version: "1.{minor}"
card:
  name: Bench skill {index}
  description: Evaluates the {metric} of {domain} resources against thresholds (synthetic benchmark skill).
  tags: [bench, {domain}, {metric}]
  examples: ["Is the {metric} of res-123 at or above the threshold?"]
input:  {{file: schemas/input.schema.json,  schema_uri: "{input}",  version: "1.0"}}
output: {{file: schemas/output.schema.json, schema_uri: "{output}", version: "1.0"}}
supporting_records:
  - {{kind: observation, file: schemas/observation.schema.json, schema_uri: "{record}", version: "1.0"}}
interaction: {{supported_response_modes: [{modes}], cancellable: {cancellable}}}
authority: {{default_mode: {authority}, approval_may_be_required: {approval}}}
"#,
            id = self.id,
            minor = self.index % 10,
            index = self.index,
            metric = self.metric,
            domain = self.domain,
            input = self.uri("input"),
            output = self.uri("output"),
            record = self.uri("observation"),
            cancellable = self.rng.below(2) == 0,
            approval = authority == "execute",
        )
    }
}

/// Properties in the large shape's `$defs/attributes`.
const ATTRIBUTES: usize = 40;

/// The large shape's schema: an `attributes` member of [`ATTRIBUTES`] optional, typed
/// properties, each with a description, declared in `$defs` and referenced.
fn widen(schema: &mut Value) {
    let properties: serde_json::Map<String, Value> = (0..ATTRIBUTES)
        .map(|i| {
            let description = format!("Synthetic attribute {i}: an optional, typed value the skill may use.");
            let kind = match i % 5 {
                0 => json!({"type": "string", "maxLength": 64, "description": description}),
                1 => json!({"type": "integer", "minimum": 0, "maximum": 1_000_000, "description": description}),
                2 => json!({"enum": ["low", "medium", "high", "critical"], "description": description}),
                3 => json!({"type": "string", "format": "date-time", "description": description}),
                _ => json!({"type": "boolean", "description": description}),
            };
            (format!("attr_{i:02}"), kind)
        })
        .collect();
    schema["properties"]["attributes"] = json!({"$ref": "#/$defs/attributes"});
    schema["$defs"]["attributes"] = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false
    });
}

/// The large shape's four more examples, from the first valid one: two valid with
/// attributes, one with an attribute of the wrong type, one with an unknown attribute.
fn widen_examples(examples: &mut Vec<Example>, seed: u64) {
    let base = examples[0].value.clone();
    let with = |attributes: Value| {
        let mut v = base.clone();
        v["attributes"] = attributes;
        v
    };
    let n = seed % 1000;
    examples.push(Example::valid(
        "with-attributes",
        with(json!({"attr_00": "alpha", "attr_01": n, "attr_02": "high", "attr_04": true})),
    ));
    examples.push(Example::valid(
        "with-more-attributes",
        with(json!({"attr_03": "2026-08-11T12:00:01Z", "attr_05": "beta", "attr_11": n + 1, "attr_37": "low"})),
    ));
    examples.push(Example::invalid(
        "attribute-wrong-type",
        with(json!({"attr_01": "many"})),
        Some(("type", "/attributes/attr_01")),
    ));
    examples.push(Example::invalid(
        "attribute-unknown",
        with(json!({"attr_99": 1})),
        None,
    ));
}

struct Example {
    stem: &'static str,
    valid: bool,
    value: Value,
    /// (keyword, instance_path) pinned in a sidecar `.expect.yaml`.
    pin: Option<(&'static str, &'static str)>,
}

impl Example {
    fn valid(stem: &'static str, value: Value) -> Example {
        Example {
            stem,
            valid: true,
            value,
            pin: None,
        }
    }
    fn invalid(
        stem: &'static str,
        value: Value,
        pin: Option<(&'static str, &'static str)>,
    ) -> Example {
        Example {
            stem,
            valid: false,
            value,
            pin,
        }
    }
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn pretty(value: &Value) -> String {
    let mut s = serde_json::to_string_pretty(value).expect("a Value serializes");
    s.push('\n');
    s
}

fn generate_skill(root: &Path, index: usize, large: bool) {
    let mut skill = Skill::new(index, large);
    let dir = root.join("skills").join(&skill.dir);
    let mut roles: [(&str, &str, Value); 3] = [
        ("input", "examples/input", skill.input_schema()),
        ("output", "examples/output", skill.output_schema()),
        (
            "observation",
            "examples/records/observation",
            skill.record_schema(),
        ),
    ];
    let mut examples = [
        skill.input_examples(),
        skill.output_examples(),
        skill.record_examples(),
    ];
    if skill.large {
        for (role, examples) in roles.iter_mut().zip(&mut examples) {
            widen(&mut role.2);
            widen_examples(examples, skill.rng.next());
        }
    }
    let (low, high) = if skill.large {
        (6_000, 12_000)
    } else {
        (1000, 3000)
    };
    for ((name, examples_dir, schema), examples) in roles.iter().zip(examples) {
        let text = pretty(schema);
        assert!(
            (low..=high).contains(&text.len()),
            "{} {name}: the schema is {} bytes, outside {low}-{high} bytes",
            skill.dir,
            text.len()
        );
        let schema_rel = format!("schemas/{name}.schema.json");
        write(&dir.join(&schema_rel), &text);
        let mut tests = Vec::new();
        for ex in examples {
            let verdict = if ex.valid { "valid" } else { "invalid" };
            let rel = format!("{examples_dir}/{verdict}/{}.json", ex.stem);
            write(&dir.join(&rel), pretty(&ex.value));
            if let Some((keyword, instance_path)) = ex.pin {
                let pin = format!("keyword: {keyword}\ninstance_path: \"{instance_path}\"\n");
                write(
                    &dir.join(format!("{examples_dir}/{verdict}/{}.expect.yaml", ex.stem)),
                    pin,
                );
            }
            tests.push(json!({
                "description": format!("{verdict}: {}", ex.stem),
                "valid": ex.valid,
                "dataPath": format!("../../skills/{}/{rel}", skill.dir),
            }));
        }
        let suite = json!({
            "target": format!("../../skills/{}/{schema_rel}", skill.dir),
            "tests": tests,
        });
        write(
            &root
                .join("peer-tests")
                .join(&skill.dir)
                .join(format!("{name}.json")),
            pretty(&suite),
        );
    }
    let manifest = skill.manifest();
    write(&dir.join("skill.yaml"), manifest);
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let large = match args.iter().position(|a| a == "--shape") {
        Some(i) if args.get(i + 1).map(String::as_str) == Some("large") => {
            args.drain(i..i + 2);
            true
        }
        Some(i) if args.get(i + 1).map(String::as_str) == Some("standard") => {
            args.drain(i..i + 2);
            false
        }
        Some(_) => usage(),
        None => false,
    };
    let (n, root) = match args.as_slice() {
        [n, dir] => match n.replace('_', "").parse::<usize>() {
            Ok(n) if n > 0 => (n, PathBuf::from(dir)),
            _ => usage(),
        },
        _ => usage(),
    };
    if root.exists()
        && std::fs::read_dir(&root)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        eprintln!(
            "gen_workspace: {} exists and is not empty; give a new directory",
            root.display()
        );
        std::process::exit(2);
    }
    // The large shape is about 45 KB per skill on disk: past 5,000 skills that is more
    // than the default workspace size limit (256 MiB), which such a vendor raises.
    let limits = if large {
        "limits: {max_workspace_bytes: 4294967296}\n"
    } else {
        ""
    };
    write(
        &root.join("skillbundle.yaml"),
        format!(
            "# Synthetic benchmark workspace: {n} skills (cargo run --release --example gen_workspace -- {n} DIR{shape})\n\
             bundle: {{name: bench-{n}, version: \"1.0.0\"}}\n\
             {limits}",
            shape = if large { " --shape large" } else { "" },
        ),
    );
    for index in 0..n {
        generate_skill(&root, index, large);
    }
    println!("{n} skills in {}", root.display());
}

fn usage() -> ! {
    eprintln!(
        "usage: gen_workspace N DIR [--shape standard|large]   (N > 0 skills; DIR new or empty)"
    );
    std::process::exit(2);
}
