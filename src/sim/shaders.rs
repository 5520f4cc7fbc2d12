//! The simulator's shaders, embedded at build time so the binary is self-contained, and
//! the reflection check of every shared struct.

use super::gpu_types::{bin_layouts, echo_layouts, trace_layouts};
use crate::contract::{
    CompactBinding, TraceBinding, WaveformBinding, PER_THREAD_RECORDS, PER_THREAD_RECORDS_FEW,
    PER_THREAD_RECORDS_THIN,
};
use crate::gpu::{self, check_layout, GpuError, HostLayout, ShaderSources, Spirv};
use crate::model::RecordLayout;
use std::collections::BTreeSet;

/// The contract's constants, codes and binding numbers as GLSL (build.rs writes it
/// from `src/contract.rs`).
const CONTRACT_GLSL: &str = include_str!(concat!(env!("OUT_DIR"), "/contract.glsl"));

/// Every shader file by the name its `#include`s use.
const FILES: &[(&str, &str)] = &[
    ("common.glsl", include_str!("../../shaders/common.glsl")),
    (
        "hit_common.glsl",
        include_str!("../../shaders/hit_common.glsl"),
    ),
    ("rng.glsl", include_str!("../../shaders/rng.glsl")),
    (
        "reflectance.glsl",
        include_str!("../../shaders/reflectance.glsl"),
    ),
    (
        "waveform_types.glsl",
        include_str!("../../shaders/waveform_types.glsl"),
    ),
    ("beam_ray.glsl", include_str!("../../shaders/beam_ray.glsl")),
    ("trace.rgen", include_str!("../../shaders/trace.rgen")),
    ("ceiling.rgen", include_str!("../../shaders/ceiling.rgen")),
    ("ceiling.rmiss", include_str!("../../shaders/ceiling.rmiss")),
    ("ceiling.rchit", include_str!("../../shaders/ceiling.rchit")),
    ("miss.rmiss", include_str!("../../shaders/miss.rmiss")),
    ("general.rchit", include_str!("../../shaders/general.rchit")),
    ("mirror.rchit", include_str!("../../shaders/mirror.rchit")),
    ("glass.rchit", include_str!("../../shaders/glass.rchit")),
    (
        "retroreflective.rchit",
        include_str!("../../shaders/retroreflective.rchit"),
    ),
    (
        "absorbent.rchit",
        include_str!("../../shaders/absorbent.rchit"),
    ),
    (
        "alpha_mask.rahit",
        include_str!("../../shaders/alpha_mask.rahit"),
    ),
    (
        "transparent.rahit",
        include_str!("../../shaders/transparent.rahit"),
    ),
    (
        "waveform_scan.glsl",
        include_str!("../../shaders/waveform_scan.glsl"),
    ),
    (
        "waveform_records.glsl",
        include_str!("../../shaders/waveform_records.glsl"),
    ),
    (
        "waveform_per_thread.glsl",
        include_str!("../../shaders/waveform_per_thread.glsl"),
    ),
    (
        "waveform_per_thread.comp",
        include_str!("../../shaders/waveform_per_thread.comp"),
    ),
    (
        "waveform_ordered.comp",
        include_str!("../../shaders/waveform_ordered.comp"),
    ),
    (
        "waveform_workgroup.comp",
        include_str!("../../shaders/waveform_workgroup.comp"),
    ),
    (
        "waveform_binned.comp",
        include_str!("../../shaders/waveform_binned.comp"),
    ),
    ("compact.comp", include_str!("../../shaders/compact.comp")),
    ("deposit.comp", include_str!("../../shaders/deposit.comp")),
    (
        "record_order.glsl",
        include_str!("../../shaders/record_order.glsl"),
    ),
    ("order.comp", include_str!("../../shaders/order.comp")),
    ("packets.comp", include_str!("../../shaders/packets.comp")),
    (
        "reflectivity.glsl",
        include_str!("../../shaders/reflectivity.glsl"),
    ),
];

/// The shader sources with the generated `contract.glsl`, as the simulator compiles
/// them (tests compile single passes from the same set).
pub fn shader_sources() -> ShaderSources {
    FILES
        .iter()
        .fold(ShaderSources::new(), |src, (name, text)| {
            src.add(name, text)
        })
        .add("contract.glsl", CONTRACT_GLSL)
}

/// The compiled shaders of the frame pipeline.
pub struct FrameShaders {
    pub raygen: Spirv,
    pub miss: Spirv,
    pub general: Spirv,
    pub retroreflective: Spirv,
    pub absorbent: Spirv,
    pub alpha_mask: Spirv,
    pub transparent: Spirv,
    /// Closest hit on a pane, for rays that split at panes.
    pub glass: Spirv,
    pub mirror: Spirv,
    /// The builds of the waveform pass, in the order [`WaveformBuild::all`] tries them.
    pub waveforms: Vec<(WaveformBuild, Spirv)>,
    /// The binned waveform's deposit pass.
    pub deposit: Spirv,
    /// The ordered waveform build's order pass.
    pub order: Spirv,
    pub compact: Spirv,
}

/// Checks that every shader using a host struct lays it out as the host does, and that
/// each struct is used somewhere (else the check would silently not run).
fn check_all(shaders: &[&Spirv], layouts: &[HostLayout]) -> Result<(), GpuError> {
    for host in layouts {
        if check_layout(shaders, host)? == 0 {
            return Err(GpuError::Layout(format!(
                "struct {} is not found in any shader: the reflection check cannot run",
                host.name
            )));
        }
    }
    Ok(())
}

/// Checks that the shaders of one pipeline declare exactly the bindings the contract
/// lists for it (all in set 0), so the host binds every buffer a shader reads, and
/// nothing the shaders do not know.
fn check_bindings(
    pipeline: &str,
    shaders: &[&Spirv],
    contract: impl Iterator<Item = u32>,
) -> Result<(), GpuError> {
    let mut declared = BTreeSet::new();
    for s in shaders {
        declared.extend(s.bindings()?.into_keys());
    }
    let expected: BTreeSet<(u32, u32)> = contract.map(|b| (0, b)).collect();
    if declared != expected {
        return Err(GpuError::Layout(format!(
            "the {pipeline} shaders declare the (set, binding)s {declared:?}; the contract \
             (src/contract.rs) has {expected:?}"
        )));
    }
    Ok(())
}

/// Which build of the waveform pass a sensor's beams take (DESIGN §7), each a shader
/// file of its own (`shaders/waveform_per_thread.comp`, `_ordered`, `_workgroup`,
/// `_binned`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaveformBuild {
    /// One invocation per beam, its records (at most this many) in private arrays.
    PerThread(u32),
    /// The order pass (`order.comp`, a workgroup per beam) puts the records (at most
    /// this many) in order, then one invocation per beam reads them in that order.
    Ordered(u32),
    /// One workgroup per beam, its records sorted in shared memory.
    Workgroup,
    /// Range bins filled chunk by chunk by the deposit pass, one invocation per beam.
    Binned,
}

impl WaveformBuild {
    /// The builds of a CPU or a GPU device, in the order they are tried: the smallest
    /// first (a CPU device pays for an invocation's private arrays in proportion to
    /// their size), then one workgroup per beam, then the binned waveform. A GPU takes
    /// the ordered build where a CPU sorts per invocation: a GPU's private arrays lie in
    /// off-chip local memory, and at 192 records (64 sub-rays behind panes) sorting them
    /// there took about half of an H100's 19.5 ms waveform pass (ordered: 14.0 ms).
    pub fn all(cpu_device: bool) -> Vec<WaveformBuild> {
        let most = if cpu_device {
            WaveformBuild::PerThread(PER_THREAD_RECORDS)
        } else {
            WaveformBuild::Ordered(PER_THREAD_RECORDS)
        };
        vec![
            WaveformBuild::PerThread(PER_THREAD_RECORDS_THIN),
            WaveformBuild::PerThread(PER_THREAD_RECORDS_FEW),
            most,
            WaveformBuild::Workgroup,
            WaveformBuild::Binned,
        ]
    }

    /// The first of `builds` that takes beams laid out as `layout`.
    pub fn for_layout(builds: &[WaveformBuild], layout: RecordLayout) -> WaveformBuild {
        let fits = |b: &&WaveformBuild| match **b {
            WaveformBuild::PerThread(records) | WaveformBuild::Ordered(records) => {
                layout.records_per_beam() <= records
            }
            WaveformBuild::Workgroup => !layout.binned(),
            WaveformBuild::Binned => true,
        };
        builds
            .iter()
            .find(fits)
            .copied()
            .unwrap_or(WaveformBuild::Binned)
    }

    /// The shader file of this build.
    fn file(self) -> &'static str {
        match self {
            WaveformBuild::PerThread(_) => "waveform_per_thread.comp",
            WaveformBuild::Ordered(_) => "waveform_ordered.comp",
            WaveformBuild::Workgroup => "waveform_workgroup.comp",
            WaveformBuild::Binned => "waveform_binned.comp",
        }
    }

    /// Compiles this build: its file, with its sizes as defines (`group`: the workgroup
    /// build's invocations per beam).
    fn compile(self, src: &ShaderSources, group: &str) -> Result<Spirv, GpuError> {
        match self {
            WaveformBuild::PerThread(records) | WaveformBuild::Ordered(records) => {
                let records = records.to_string();
                gpu::compile(src, self.file(), &[("PER_THREAD_CAPACITY", &records)])
            }
            WaveformBuild::Workgroup => {
                gpu::compile(src, self.file(), &[("WAVEFORM_GROUP", group)])
            }
            WaveformBuild::Binned => gpu::compile(src, self.file(), &[]),
        }
    }
}

/// The packet pass, its push constants checked against the host's; compiled when a
/// sensor's packets are first made on the GPU.
pub fn packet_shader() -> Result<Spirv, GpuError> {
    let spirv = gpu::compile(&shader_sources(), "packets.comp", &[])?;
    check_all(&[&spirv], &[super::gpu_types::packet_params_layout()])?;
    // It reaches every buffer by address.
    check_bindings("packets", &[&spirv], std::iter::empty())?;
    Ok(spirv)
}

impl FrameShaders {
    /// Compiles the shaders and checks the shared struct layouts, so a drifted layout
    /// fails here and not as garbage in the output.
    pub fn compile(cpu_device: bool) -> Result<FrameShaders, GpuError> {
        let src = shader_sources();
        let c = |name: &str| gpu::compile(&src, name, &[]);
        let group = if cpu_device { "16" } else { "64" };
        let s = FrameShaders {
            raygen: c("trace.rgen")?,
            miss: c("miss.rmiss")?,
            general: c("general.rchit")?,
            retroreflective: c("retroreflective.rchit")?,
            absorbent: c("absorbent.rchit")?,
            alpha_mask: c("alpha_mask.rahit")?,
            transparent: c("transparent.rahit")?,
            glass: c("glass.rchit")?,
            mirror: c("mirror.rchit")?,
            waveforms: WaveformBuild::all(cpu_device)
                .into_iter()
                .map(|b| b.compile(&src, group).map(|s| (b, s)))
                .collect::<Result<_, _>>()?,
            deposit: c("deposit.comp")?,
            order: c("order.comp")?,
            compact: c("compact.comp")?,
        };
        check_all(&s.trace_shaders(), &trace_layouts())?;
        let waveforms = s.waveform_shaders();
        check_all(
            &[waveforms.as_slice(), &[&s.compact, &s.deposit, &s.order]].concat(),
            &echo_layouts(),
        )?;
        let binned = [s.waveform(WaveformBuild::Binned), Some(&s.deposit)];
        check_all(
            &binned.into_iter().flatten().collect::<Vec<_>>(),
            &bin_layouts(),
        )?;
        s.check_bindings()?;
        Ok(s)
    }

    /// Every build of the waveform pass.
    fn waveform_shaders(&self) -> Vec<&Spirv> {
        self.waveforms.iter().map(|(_, s)| s).collect()
    }

    /// The SPIR-V of one waveform build.
    pub fn waveform(&self, build: WaveformBuild) -> Option<&Spirv> {
        self.waveforms
            .iter()
            .find(|(b, _)| *b == build)
            .map(|(_, s)| s)
    }

    /// The shaders of the trace pipeline.
    fn trace_shaders(&self) -> [&Spirv; 9] {
        [
            &self.raygen,
            &self.miss,
            &self.general,
            &self.retroreflective,
            &self.absorbent,
            &self.alpha_mask,
            &self.transparent,
            &self.glass,
            &self.mirror,
        ]
    }

    fn check_bindings(&self) -> Result<(), GpuError> {
        check_bindings(
            "trace",
            &self.trace_shaders(),
            TraceBinding::ALL.iter().map(|b| b.number()),
        )?;
        for waveform in self.waveform_shaders() {
            check_bindings(
                &waveform.name,
                &[waveform],
                WaveformBinding::ALL.iter().map(|b| b.number()),
            )?;
        }
        // The deposit reaches its records and bins by address alone.
        check_bindings("deposit", &[&self.deposit], std::iter::empty())?;
        // So does the order pass.
        check_bindings("order", &[&self.order], std::iter::empty())?;
        check_bindings(
            "compaction",
            &[&self.compact],
            CompactBinding::ALL.iter().map(|b| b.number()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{self, curve_model, estimator, material_class, return_mode};

    #[test]
    fn gpus_take_the_ordered_build_where_cpus_sort_per_invocation() {
        let layout = |records| RecordLayout {
            beams: 1,
            subrays: records,
            slots: 1,
            max_bounces: 1,
        };
        let (gpu, cpu) = (WaveformBuild::all(false), WaveformBuild::all(true));
        let on =
            |builds: &[WaveformBuild], records| WaveformBuild::for_layout(builds, layout(records));
        for builds in [&gpu, &cpu] {
            assert_eq!(on(builds, 1), WaveformBuild::PerThread(4));
            assert_eq!(on(builds, 48), WaveformBuild::PerThread(64));
            assert_eq!(on(builds, 257), WaveformBuild::Workgroup);
            assert_eq!(on(builds, 1025), WaveformBuild::Binned);
        }
        assert_eq!(on(&gpu, 192), WaveformBuild::Ordered(256));
        assert_eq!(on(&cpu, 192), WaveformBuild::PerThread(256));
    }

    /// Every name the contract header defines.
    fn contract_names() -> Vec<&'static str> {
        let lists = [
            contract::LIMITS,
            material_class::GLSL,
            return_mode::GLSL,
            estimator::GLSL,
            curve_model::GLSL,
        ];
        let mut names: Vec<&str> = lists.iter().flat_map(|l| l.iter().map(|c| c.0)).collect();
        names.extend(contract::WAVEFORM_FLOATS.iter().map(|c| c.0));
        names.extend(contract::TRACE_FLOATS.iter().map(|c| c.0));
        names.extend(TraceBinding::ALL.iter().map(|b| b.glsl_name()));
        names.extend(WaveformBinding::ALL.iter().map(|b| b.glsl_name()));
        names.extend(CompactBinding::ALL.iter().map(|b| b.glsl_name()));
        names
    }

    /// The code of a GLSL line, without its `//` comment.
    fn code(line: &str) -> &str {
        line.split("//").next().unwrap_or("").trim()
    }

    /// Whether `text` has `word` followed (after spaces) by `=` and a digit.
    fn assigns_a_literal(text: &str, word: &str) -> bool {
        text.match_indices(word).any(|(i, _)| {
            let rest = text[i + word.len()..].trim_start();
            rest.strip_prefix('=')
                .is_some_and(|r| r.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        })
    }

    /// Whether `text` compares something with a numeric literal (`== 1u`, `!= 2`).
    fn compares_with_a_literal(text: &str) -> bool {
        ["==", "!="].iter().any(|op| {
            text.match_indices(op).any(|(i, _)| {
                text[i + 2..]
                    .trim_start()
                    .starts_with(|c: char| c.is_ascii_digit())
            })
        })
    }

    #[test]
    fn the_header_is_the_one_the_contract_writes() {
        assert_eq!(CONTRACT_GLSL, contract::glsl_header());
    }

    #[test]
    fn the_shaders_hold_no_copy_of_the_contract() {
        let names = contract_names();
        // Not vacuous: the scan sees the shaders and the contract's names.
        assert!(
            names.contains(&"MAX_RETURNS") && names.len() > 20,
            "{names:?}"
        );
        assert!(FILES.iter().any(|(f, _)| *f == "waveform_scan.glsl"));
        let code_fields = [".estimator", ".return_mode", ".curve_model", "class_id"];
        for (file, text) in FILES {
            for (n, line) in text.lines().enumerate() {
                let c = code(line);
                let at = format!("shaders/{file}:{}: {c}", n + 1);
                let defined = c
                    .strip_prefix("#define ")
                    .or_else(|| c.strip_prefix("const "))
                    .map(|rest| rest.split_whitespace().take(2).collect::<Vec<_>>());
                if let Some(words) = defined {
                    let copies = words.iter().any(|w| names.contains(w));
                    assert!(!copies, "{at}: defines a contract name (src/contract.rs)");
                }
                assert!(
                    !assigns_a_literal(c, "binding"),
                    "{at}: binding numbers come from contract.glsl"
                );
                assert!(
                    !c.starts_with("case ") || !c[5..].starts_with(|ch: char| ch.is_ascii_digit()),
                    "{at}: switch on a contract code with a literal"
                );
                let code_field = code_fields.iter().any(|f| c.contains(f));
                assert!(
                    !(code_field && compares_with_a_literal(c)),
                    "{at}: compare codes with their contract.glsl names"
                );
            }
        }
    }

    #[test]
    fn the_spirv_declares_the_contracts_bindings() {
        // Compiling needs no device; `compile` checks the layouts and the bindings.
        for cpu_device in [true, false] {
            if let Err(e) = FrameShaders::compile(cpu_device) {
                panic!("{e}");
            }
        }
    }
}
