//! GLSL → SPIR-V with shaderc, and reflection of what the SPIR-V declares: descriptor
//! bindings, push constants, and the byte layout of structs shared with the host.

use super::error::{GpuError, GpuResult};
use ash::vk;
use rspirv_reflect::rspirv::dr::{Instruction, Operand};
use rspirv_reflect::spirv::{Decoration, Op};
use rspirv_reflect::Reflection;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Shader stages beamtrace compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    RayGen,
    Miss,
    ClosestHit,
    AnyHit,
    Compute,
    Vertex,
    Fragment,
}

impl Stage {
    /// The stage of a file by its extension (`.rgen`, `.rmiss`, `.rchit`, `.rahit`,
    /// `.comp`, `.vert`, `.frag`).
    pub fn from_file_name(name: &str) -> Option<Stage> {
        let ext = name.rsplit('.').next()?;
        Some(match ext {
            "rgen" => Stage::RayGen,
            "rmiss" => Stage::Miss,
            "rchit" => Stage::ClosestHit,
            "rahit" => Stage::AnyHit,
            "comp" => Stage::Compute,
            "vert" => Stage::Vertex,
            "frag" => Stage::Fragment,
            _ => return None,
        })
    }

    fn shaderc_kind(self) -> shaderc::ShaderKind {
        match self {
            Stage::RayGen => shaderc::ShaderKind::RayGeneration,
            Stage::Miss => shaderc::ShaderKind::Miss,
            Stage::ClosestHit => shaderc::ShaderKind::ClosestHit,
            Stage::AnyHit => shaderc::ShaderKind::AnyHit,
            Stage::Compute => shaderc::ShaderKind::Compute,
            Stage::Vertex => shaderc::ShaderKind::Vertex,
            Stage::Fragment => shaderc::ShaderKind::Fragment,
        }
    }

    pub(crate) fn vk(self) -> vk::ShaderStageFlags {
        match self {
            Stage::RayGen => vk::ShaderStageFlags::RAYGEN_KHR,
            Stage::Miss => vk::ShaderStageFlags::MISS_KHR,
            Stage::ClosestHit => vk::ShaderStageFlags::CLOSEST_HIT_KHR,
            Stage::AnyHit => vk::ShaderStageFlags::ANY_HIT_KHR,
            Stage::Compute => vk::ShaderStageFlags::COMPUTE,
            Stage::Vertex => vk::ShaderStageFlags::VERTEX,
            Stage::Fragment => vk::ShaderStageFlags::FRAGMENT,
        }
    }
}

/// A set of GLSL sources (entry files and `#include`d files) known by name.
#[derive(Debug, Clone, Default)]
pub struct ShaderSources {
    files: HashMap<String, String>,
}

impl ShaderSources {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(mut self, name: &str, text: &str) -> Self {
        self.files.insert(name.to_string(), text.to_string());
        self
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.files.get(name).map(String::as_str)
    }
}

/// Compiled SPIR-V with its reflection.
#[derive(Clone)]
pub struct Spirv {
    pub name: String,
    pub stage: Stage,
    pub words: Vec<u32>,
}

/// Compiles `name` from `sources` (includes resolved from `sources` too) with the given
/// `#define`s. Ray-tracing GLSL needs the Vulkan 1.2 / SPIR-V 1.4 target.
///
/// Each result is kept for the rest of the process, by a digest of everything it was
/// compiled from: the GLSL compiler takes most of a simulator's start-up (about 1 s of
/// 1.2 s on a CPU driver), and one process (tests, the benchmark suite, HiL jobs,
/// batches) makes many simulators of the same shaders.
///
/// With a folder set by [`set_disk_cache`], results also outlive the process there.
pub fn compile(sources: &ShaderSources, name: &str, defines: &[(&str, &str)]) -> GpuResult<Spirv> {
    static COMPILED: Mutex<BTreeMap<[u8; 32], Spirv>> = Mutex::new(BTreeMap::new());
    let key = compile_key(sources, name, defines);
    let cached = |m: &BTreeMap<[u8; 32], Spirv>| m.get(&key).cloned();
    if let Some(spirv) = COMPILED.lock().ok().as_deref().and_then(cached) {
        return Ok(spirv);
    }
    let disk = DISK_CACHE.lock().ok().and_then(|d| d.clone());
    let from_disk = disk.as_deref().and_then(|dir| read_cached(dir, &key, name));
    let spirv = match from_disk {
        Some(spirv) => spirv,
        None => {
            let spirv = compile_uncached(sources, name, defines)?;
            if let Some(dir) = &disk {
                write_cached(dir, &key, &spirv);
            }
            spirv
        }
    };
    if let Ok(mut m) = COMPILED.lock() {
        m.insert(key, spirv.clone());
    }
    Ok(spirv)
}

static DISK_CACHE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Keep compiled SPIR-V in `dir` too (`None`: in memory only, the default), one file per
/// digest of its sources, defines and compiler, so a new process skips the GLSL
/// compiler for shaders an earlier one compiled. A file that is unreadable or not
/// SPIR-V is compiled anew; one that cannot be written is left out (the shader is
/// compiled again next time), with a warning in the log.
pub fn set_disk_cache(dir: Option<PathBuf>) {
    if let Ok(mut d) = DISK_CACHE.lock() {
        *d = dir;
    }
}

/// Where the programs built on this library (the binary, the Python package, the FMU)
/// keep compiled shaders between runs: `$BEAMTRACE_SHADER_CACHE` (`off`: not kept),
/// else `$XDG_CACHE_HOME/beamtrace/shaders`, else `~/.cache/beamtrace/shaders`.
pub fn default_disk_cache() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = var("BEAMTRACE_SHADER_CACHE") {
        return (dir != "off").then(|| PathBuf::from(dir));
    }
    let base = var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("beamtrace").join("shaders"))
}

fn cache_file(dir: &Path, key: &[u8; 32]) -> PathBuf {
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{hex}.spv"))
}

fn read_cached(dir: &Path, key: &[u8; 32], name: &str) -> Option<Spirv> {
    let bytes = std::fs::read(cache_file(dir, key)).ok()?;
    if bytes.len() < 20 || bytes.len() % 4 != 0 {
        return None;
    }
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    if words[0] != SPIRV_MAGIC {
        return None;
    }
    Some(Spirv {
        name: name.to_string(),
        stage: Stage::from_file_name(name)?,
        words,
    })
}

/// The first word of every SPIR-V module.
const SPIRV_MAGIC: u32 = 0x0723_0203;

fn write_cached(dir: &Path, key: &[u8; 32], spirv: &Spirv) {
    let path = cache_file(dir, key);
    let bytes: Vec<u8> = spirv.words.iter().flat_map(|w| w.to_le_bytes()).collect();
    // Written beside under a name no other writer uses (threads of this process
    // included), then renamed: a reader never sees half a file.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&tmp, &bytes))
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        log::warn!("shader cache: cannot write {}: {e}", path.display());
    }
}

/// SHA-256 of the entry's name, the defines and every source (sorted by name).
fn compile_key(sources: &ShaderSources, name: &str, defines: &[(&str, &str)]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    // The compiler and its settings too, for the files of the disk cache.
    let (spirv_version, revision) = shaderc::get_spirv_version();
    field(
        format!(
            "beamtrace {} shaderc {spirv_version}.{revision}",
            env!("CARGO_PKG_VERSION")
        )
        .as_bytes(),
    );
    field(name.as_bytes());
    for (k, v) in defines {
        field(k.as_bytes());
        field(v.as_bytes());
    }
    let files: BTreeMap<&String, &String> = sources.files.iter().collect();
    for (file, text) in files {
        field(file.as_bytes());
        field(text.as_bytes());
    }
    h.finalize().into()
}

fn compile_uncached(
    sources: &ShaderSources,
    name: &str,
    defines: &[(&str, &str)],
) -> GpuResult<Spirv> {
    let err = |message: String| GpuError::Shader {
        name: name.to_string(),
        message,
    };
    let stage = Stage::from_file_name(name)
        .ok_or_else(|| err("unknown shader stage (extension)".into()))?;
    let text = sources
        .get(name)
        .ok_or_else(|| err("no such shader source".into()))?;
    let compiler = shaderc::Compiler::new()
        .map_err(|e| err(format!("cannot start the shader compiler: {e}")))?;
    let mut options = shaderc::CompileOptions::new()
        .map_err(|e| err(format!("cannot create compile options: {e}")))?;
    options.set_target_env(
        shaderc::TargetEnv::Vulkan,
        shaderc::EnvVersion::Vulkan1_2 as u32,
    );
    options.set_target_spirv(shaderc::SpirvVersion::V1_4);
    // No SPIR-V optimisation: it strips the names reflection needs, and every driver
    // optimises the SPIR-V again when it makes the pipeline.
    options.set_optimization_level(shaderc::OptimizationLevel::Zero);
    // No debug info: glslang splits the embedded source text at arbitrary bytes, which
    // breaks UTF-8 decoding in the reflection. OpName/OpMemberName stay without it.
    for (k, v) in defines {
        options.add_macro_definition(k, Some(v));
    }
    options.set_include_callback(|requested, _ty, _from, _depth| {
        sources
            .get(requested)
            .map(|content| shaderc::ResolvedInclude {
                resolved_name: requested.to_string(),
                content: content.to_string(),
            })
            .ok_or_else(|| format!("include '{requested}' not found"))
    });
    let artifact = compiler
        .compile_into_spirv(text, stage.shaderc_kind(), name, "main", Some(&options))
        .map_err(|e| err(e.to_string()))?;
    Ok(Spirv {
        name: name.to_string(),
        stage,
        words: artifact.as_binary().to_vec(),
    })
}

/// A descriptor binding as the shaders declare it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindingInfo {
    pub set: u32,
    pub binding: u32,
    pub ty: vk::DescriptorType,
    pub count: u32,
    pub name: String,
    pub stages: vk::ShaderStageFlags,
}

/// The byte layout of a struct as the SPIR-V lays it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructLayout {
    pub name: String,
    /// (member name, byte offset), in declaration order.
    pub members: Vec<(String, u32)>,
    /// Array stride where the struct is an array element (its size in the array).
    pub array_stride: Option<u32>,
}

impl Spirv {
    fn reflection(&self) -> GpuResult<Reflection> {
        Reflection::new_from_spirv(bytemuck::cast_slice(&self.words)).map_err(|e| {
            GpuError::Shader {
                name: self.name.clone(),
                message: format!("reflection failed: {e:?}"),
            }
        })
    }

    /// Descriptor bindings, keyed by (set, binding).
    pub fn bindings(&self) -> GpuResult<BTreeMap<(u32, u32), BindingInfo>> {
        let sets = self
            .reflection()?
            .get_descriptor_sets()
            .map_err(|e| GpuError::Shader {
                name: self.name.clone(),
                message: format!("descriptor reflection failed: {e:?}"),
            })?;
        let mut out = BTreeMap::new();
        for (set, bindings) in sets {
            for (binding, info) in bindings {
                let count = match info.binding_count {
                    rspirv_reflect::BindingCount::One => 1,
                    rspirv_reflect::BindingCount::StaticSized(n) => n as u32,
                    rspirv_reflect::BindingCount::Unbounded => {
                        return Err(GpuError::Shader {
                            name: self.name.clone(),
                            message: format!("unbounded array at set {set} binding {binding}"),
                        })
                    }
                };
                out.insert(
                    (set, binding),
                    BindingInfo {
                        set,
                        binding,
                        ty: vk::DescriptorType::from_raw(info.ty.0 as i32),
                        count,
                        name: info.name,
                        stages: self.stage.vk(),
                    },
                );
            }
        }
        Ok(out)
    }

    /// Size in bytes of the push-constant block (0 if none).
    pub fn push_constant_size(&self) -> GpuResult<u32> {
        let pc = self
            .reflection()?
            .get_push_constant_range()
            .map_err(|e| GpuError::Shader {
                name: self.name.clone(),
                message: format!("push constant reflection failed: {e:?}"),
            })?;
        Ok(pc.map(|p| p.offset + p.size).unwrap_or(0))
    }

    /// The layout of the struct named `type_name`, if this shader uses it.
    pub fn struct_layout(&self, type_name: &str) -> GpuResult<Option<StructLayout>> {
        let module = self.reflection()?.0;
        let names: HashMap<u32, String> = module
            .debug_names
            .iter()
            .filter(|i| i.class.opcode == Op::Name)
            .filter_map(|i| Some((i.operands.first()?.id_ref_any()?, string_operand(i, 1)?)))
            .collect();
        let struct_ids: Vec<u32> = module
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::TypeStruct)
            .filter_map(|i| i.result_id)
            .filter(|id| names.get(id).map(String::as_str) == Some(type_name))
            .collect();
        // Structs used in several storage layouts appear more than once; any explicitly
        // laid-out one will do (they must all agree, which the check below enforces).
        let mut found: Option<StructLayout> = None;
        for id in struct_ids {
            let mut members: BTreeMap<u32, (String, Option<u32>)> = BTreeMap::new();
            for inst in &module.debug_names {
                if inst.class.opcode == Op::MemberName
                    && inst.operands.first().and_then(Operand::id_ref_any) == Some(id)
                {
                    if let (Some(Operand::LiteralBit32(m)), Some(n)) =
                        (inst.operands.get(1), string_operand(inst, 2))
                    {
                        members.entry(*m).or_insert((String::new(), None)).0 = n;
                    }
                }
            }
            for inst in &module.annotations {
                if inst.class.opcode == Op::MemberDecorate
                    && inst.operands.first().and_then(Operand::id_ref_any) == Some(id)
                {
                    if let (
                        Some(Operand::LiteralBit32(m)),
                        Some(Operand::Decoration(Decoration::Offset)),
                        Some(Operand::LiteralBit32(off)),
                    ) = (
                        inst.operands.get(1),
                        inst.operands.get(2),
                        inst.operands.get(3),
                    ) {
                        members.entry(*m).or_insert((String::new(), None)).1 = Some(*off);
                    }
                }
            }
            if members.values().any(|(_, off)| off.is_none()) {
                continue; // a copy without explicit layout (function-local)
            }
            let array_stride = array_stride_of(&module, id);
            let layout = StructLayout {
                name: type_name.to_string(),
                members: members
                    .into_values()
                    .map(|(n, off)| (n, off.unwrap_or(0)))
                    .collect(),
                array_stride,
            };
            match &found {
                Some(prev) if prev.members != layout.members => {
                    return Err(GpuError::Layout(format!(
                        "{}: struct {type_name} has two different layouts",
                        self.name
                    )))
                }
                Some(prev) if prev.array_stride.is_some() => {}
                _ => found = Some(layout),
            }
        }
        Ok(found)
    }
}

fn string_operand(inst: &Instruction, index: usize) -> Option<String> {
    match inst.operands.get(index)? {
        Operand::LiteralString(s) => Some(s.clone()),
        _ => None,
    }
}

fn array_stride_of(module: &rspirv_reflect::rspirv::dr::Module, struct_id: u32) -> Option<u32> {
    let arrays: Vec<u32> = module
        .types_global_values
        .iter()
        .filter(|i| matches!(i.class.opcode, Op::TypeRuntimeArray | Op::TypeArray))
        .filter(|i| i.operands.first().and_then(Operand::id_ref_any) == Some(struct_id))
        .filter_map(|i| i.result_id)
        .collect();
    module.annotations.iter().find_map(|inst| {
        if inst.class.opcode != Op::Decorate {
            return None;
        }
        let target = inst.operands.first()?.id_ref_any()?;
        if !arrays.contains(&target) {
            return None;
        }
        match (inst.operands.get(1), inst.operands.get(2)) {
            (
                Some(Operand::Decoration(Decoration::ArrayStride)),
                Some(Operand::LiteralBit32(stride)),
            ) => Some(*stride),
            _ => None,
        }
    })
}

/// The host's view of a shared struct: member names with their offsets (from
/// `std::mem::offset_of!`) and its size.
#[derive(Debug, Clone)]
pub struct HostLayout {
    pub name: &'static str,
    pub members: Vec<(&'static str, u32)>,
    pub size: u32,
}

/// Checks that every shader using `host.name` lays it out exactly like the host does.
/// Returns how many shaders used it (so a caller can insist it was checked at all).
pub fn check_layout(shaders: &[&Spirv], host: &HostLayout) -> GpuResult<usize> {
    let mut uses = 0;
    for shader in shaders {
        let Some(layout) = shader.struct_layout(host.name)? else {
            continue;
        };
        uses += 1;
        let device: Vec<(&str, u32)> = layout
            .members
            .iter()
            .map(|(n, o)| (n.as_str(), *o))
            .collect();
        if device != host.members {
            return Err(GpuError::Layout(format!(
                "struct {} in {}: shader has {:?}, host has {:?}",
                host.name, shader.name, device, host.members
            )));
        }
        if let Some(stride) = layout.array_stride {
            if stride != host.size {
                return Err(GpuError::Layout(format!(
                    "struct {} in {}: shader array stride {stride} bytes, host size {} bytes",
                    host.name, shader.name, host.size
                )));
            }
        }
    }
    Ok(uses)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(body: &str) -> ShaderSources {
        let text = "#version 460\nlayout(local_size_x = 1) in;\n\
             layout(set = 0, binding = 0) buffer B { uint v[]; };\n\
             #include \"body.glsl\"\nvoid main() { v[0] = VALUE + extra(); }\n";
        ShaderSources::new()
            .add("t.comp", text)
            .add("body.glsl", body)
    }

    /// The process-wide cache answers only for the same sources and defines: a changed
    /// define or a changed include compiles anew (a stale answer would give old words).
    #[test]
    fn compiled_shaders_are_reused_only_for_the_same_inputs() {
        let a = sources("uint extra() { return 1u; }");
        let one = compile(&a, "t.comp", &[("VALUE", "1u")]).unwrap();
        let again = compile(&a, "t.comp", &[("VALUE", "1u")]).unwrap();
        let two = compile(&a, "t.comp", &[("VALUE", "2u")]).unwrap();
        let b = sources("uint extra() { return 7u; }");
        let other_include = compile(&b, "t.comp", &[("VALUE", "1u")]).unwrap();
        assert_eq!(one.words, again.words);
        assert_ne!(one.words, two.words);
        assert_ne!(one.words, other_include.words);
        let fresh = compile_uncached(&b, "t.comp", &[("VALUE", "1u")]).unwrap();
        assert_eq!(other_include.words, fresh.words);
    }

    /// The disk cache gives back what it was given, and nothing for a file that is cut
    /// short or is not SPIR-V (those compile anew).
    #[test]
    fn disk_cache_round_trips_and_refuses_damaged_files() {
        let dir = tempfile::tempdir().unwrap();
        let src = sources("uint extra() { return 3u; }");
        let spirv = compile_uncached(&src, "t.comp", &[("VALUE", "5u")]).unwrap();
        let key = compile_key(&src, "t.comp", &[("VALUE", "5u")]);
        assert!(
            read_cached(dir.path(), &key, "t.comp").is_none(),
            "empty cache"
        );
        write_cached(dir.path(), &key, &spirv);
        let back = read_cached(dir.path(), &key, "t.comp").expect("cached");
        assert_eq!(
            (back.words, back.stage),
            (spirv.words.clone(), Stage::Compute)
        );
        let file = cache_file(dir.path(), &key);
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() - 2]).unwrap();
        assert!(
            read_cached(dir.path(), &key, "t.comp").is_none(),
            "cut short"
        );
        let mut other = bytes.clone();
        other[0] ^= 0xff;
        std::fs::write(&file, &other).unwrap();
        assert!(
            read_cached(dir.path(), &key, "t.comp").is_none(),
            "not SPIR-V"
        );
    }
}
