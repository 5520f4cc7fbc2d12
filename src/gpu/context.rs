//! Vulkan instance, device selection and the objects every other GPU resource borrows.
//!
//! Every resource holds an `Arc<Context>`, so the device outlives all of them and `Drop`
//! order is always right: resources first, then the allocator, the device, the instance.

use super::error::{GpuError, GpuResult, VkContext};
use ash::{ext, khr, vk};
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use gpu_allocator::{AllocationSizes, AllocatorDebugSettings};
use std::ffi::{c_char, c_void, CStr};
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex};

/// Extensions a device must have for beamtrace's ray tracing.
pub const REQUIRED_EXTENSIONS: [&CStr; 3] = [
    khr::acceleration_structure::NAME,
    khr::ray_tracing_pipeline::NAME,
    khr::deferred_host_operations::NAME,
];

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// How to open the device.
#[derive(Debug, Clone, Default)]
pub struct ContextOptions {
    /// Index into the loader's device list (`beamtrace info`); `None` picks the best.
    pub device_index: Option<usize>,
    /// Enable the Khronos validation layer and record its messages.
    pub validation: bool,
    /// Treat the device as one with memory of its own (`Context::unified_memory` false)
    /// even where it works in the host's: runs the discrete-GPU paths on a CPU driver,
    /// for tests.
    pub separate_memory: bool,
    /// Treat a CPU driver as a GPU (`Context::is_cpu` false): runs the paths the
    /// simulator takes on GPUs, for tests.
    pub gpu_paths: bool,
}

/// What `beamtrace info` shows about a device.
#[derive(Debug, Clone)]
pub struct DeviceInfo {
    pub index: usize,
    pub name: String,
    pub kind: String,
    pub driver: String,
    pub api_version: String,
    /// Missing ray-tracing extensions/features (empty = usable).
    pub missing: Vec<String>,
    pub max_ray_recursion_depth: u32,
    pub shader_group_handle_size: u32,
    pub max_instance_count: u64,
    pub max_primitive_count: u64,
    pub timestamp_period_ns: f32,
}

/// Ray-tracing limits that SBT layout and AS builds depend on.
#[derive(Debug, Clone, Copy)]
pub struct RtLimits {
    pub handle_size: u32,
    pub handle_alignment: u32,
    pub base_alignment: u32,
    pub max_recursion_depth: u32,
    pub scratch_alignment: u32,
    pub timestamp_period_ns: f32,
    pub timestamps_supported: bool,
    pub max_launch_width: u32,
    /// The largest buffer a storage-buffer descriptor may cover (bytes).
    pub max_storage_buffer_range: u64,
    /// Invocations that run in lockstep (a CPU driver's SIMD lanes, a GPU's warp).
    pub subgroup_size: u32,
}

/// One memory heap of the device, as Vulkan reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryHeap {
    /// Bytes.
    pub size: u64,
    /// Device-local memory (VRAM on a discrete GPU; system memory on a CPU driver).
    pub device_local: bool,
    /// Some memory type of the heap can be mapped by the host.
    pub host_visible: bool,
}

/// The heaps of a physical device.
fn read_heaps(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Vec<MemoryHeap> {
    // SAFETY: plain query.
    let props = unsafe { instance.get_physical_device_memory_properties(pd) };
    let types = &props.memory_types[..props.memory_type_count as usize];
    props.memory_heaps[..props.memory_heap_count as usize]
        .iter()
        .enumerate()
        .map(|(i, h)| MemoryHeap {
            size: h.size,
            device_local: h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL),
            host_visible: types.iter().any(|t| {
                t.heap_index as usize == i
                    && t.property_flags
                        .contains(vk::MemoryPropertyFlags::HOST_VISIBLE)
            }),
        })
        .collect()
}

/// Messages the validation layer reported (shared with the callback).
#[derive(Default)]
struct ValidationLog {
    messages: Mutex<Vec<String>>,
}

pub struct Context {
    // Keeps the Vulkan loader library loaded for as long as any handle exists.
    _entry: ash::Entry,
    pub(crate) instance: ash::Instance,
    debug: Option<(ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    validation_log: Box<ValidationLog>,
    pub(crate) device: ash::Device,
    pub(crate) accel: khr::acceleration_structure::Device,
    pub(crate) rt: khr::ray_tracing_pipeline::Device,
    pub(crate) queue: Mutex<vk::Queue>,
    pub(crate) command_pool: Mutex<vk::CommandPool>,
    pub(crate) allocator: ManuallyDrop<Mutex<Allocator>>,
    pub limits: RtLimits,
    /// The device's memory heaps, for callers to check a workload against before they
    /// allocate it.
    pub memory_heaps: Vec<MemoryHeap>,
    pub device_name: String,
    pub driver_info: String,
    /// The Vulkan version the device reports ("1.4.312").
    pub api_version: String,
    /// A CPU implementation (lavapipe): workgroup sizes and batch shapes differ.
    pub is_cpu: bool,
    /// The device works in the host's own memory (a CPU driver or an integrated GPU):
    /// host-visible buffers are as fast for it as any. On a discrete GPU they lie across
    /// the bus, where scattered shader writes are slow and copies of whole ranges are not.
    pub unified_memory: bool,
    /// The queue runs graphics work too (drawing, offscreen pictures); devices whose
    /// compute family lacks it simulate but cannot draw.
    pub supports_graphics: bool,
    /// The device was opened for presenting to a window (VK_KHR_swapchain enabled).
    pub presenting: bool,
    /// The device's `largePoints` feature is on: points wider than one pixel.
    pub large_points: bool,
    // Read when presenting (feature `window`).
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub(crate) queue_family: u32,
    pub(crate) physical_device: vk::PhysicalDevice,
}

/// What a device opened for a window needs besides ray tracing: the instance
/// extensions the window system's surface takes (ash-window lists them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Presentation<'a> {
    pub instance_extensions: &'a [*const c_char],
}

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    kind: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the loader passes a valid callback-data pointer for the call's duration and
    // `user` is the boxed ValidationLog that outlives the messenger (Context::drop).
    let (message, log) = unsafe {
        let msg = if data.is_null() || (*data).p_message.is_null() {
            String::from("(no message)")
        } else {
            CStr::from_ptr((*data).p_message)
                .to_string_lossy()
                .into_owned()
        };
        (msg, &*(user as *const ValidationLog))
    };
    let counts = kind.contains(vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION)
        && severity.intersects(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        );
    if counts {
        log::error!("vulkan validation: {message}");
        VALIDATION_TOTAL.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if let Ok(mut m) = log.messages.lock() {
            m.push(message);
        }
    } else {
        log::debug!("vulkan: {message}");
    }
    vk::FALSE
}

fn device_kind(t: vk::PhysicalDeviceType) -> &'static str {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => "discrete GPU",
        vk::PhysicalDeviceType::INTEGRATED_GPU => "integrated GPU",
        vk::PhysicalDeviceType::VIRTUAL_GPU => "virtual GPU",
        vk::PhysicalDeviceType::CPU => "CPU",
        _ => "other",
    }
}

fn kind_rank(t: vk::PhysicalDeviceType) -> u32 {
    match t {
        vk::PhysicalDeviceType::DISCRETE_GPU => 0,
        vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
        vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
        vk::PhysicalDeviceType::CPU => 3,
        _ => 4,
    }
}

fn version_string(v: u32) -> String {
    format!(
        "{}.{}.{}",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    )
}

fn load_entry() -> GpuResult<ash::Entry> {
    // SAFETY: loading the system Vulkan loader; the library stays loaded for the Entry's life.
    unsafe { ash::Entry::load() }.map_err(|e| GpuError::Loader(e.to_string()))
}

fn create_instance(
    entry: &ash::Entry,
    validation: bool,
    presentation: Option<Presentation<'_>>,
) -> GpuResult<ash::Instance> {
    let app = vk::ApplicationInfo::default()
        .application_name(c"beamtrace")
        .engine_name(c"beamtrace")
        .api_version(vk::API_VERSION_1_2);
    let mut layers = Vec::new();
    let mut extensions: Vec<*const c_char> = presentation
        .map(|p| p.instance_extensions.to_vec())
        .unwrap_or_default();
    if validation {
        // SAFETY: plain query of the loader.
        let available = unsafe { entry.enumerate_instance_layer_properties() }
            .vk("vkEnumerateInstanceLayerProperties")?;
        let found = available
            .iter()
            .any(|l| l.layer_name_as_c_str().ok() == Some(VALIDATION_LAYER));
        if !found {
            return Err(GpuError::Usage(
                "validation was requested but VK_LAYER_KHRONOS_validation is not installed \
                 (Debian: vulkan-validationlayers; scripts/setup-test.sh installs it)"
                    .into(),
            ));
        }
        layers.push(VALIDATION_LAYER.as_ptr());
        extensions.push(ext::debug_utils::NAME.as_ptr());
        extensions.push(ext::validation_features::NAME.as_ptr());
    }
    // Synchronization validation too: frames overlap (two in flight, shared buffers
    // ordered by barriers), and a missing barrier is a bug no other check sees. Best
    // practices (the vendor-neutral set) catch what is legal but wasteful, such as
    // barriers on ALL_COMMANDS where exact stages are known.
    let enabled = [
        vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION,
        vk::ValidationFeatureEnableEXT::BEST_PRACTICES,
    ];
    let mut features = vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled);
    let mut info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_layer_names(&layers)
        .enabled_extension_names(&extensions);
    if validation {
        info = info.push_next(&mut features);
    }
    // SAFETY: all pointers in `info` live until the call returns.
    unsafe { entry.create_instance(&info, None) }.vk("vkCreateInstance")
}

/// Which required extensions and features `pd` lacks.
fn missing_rt_support(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Vec<String> {
    // SAFETY: `pd` comes from this instance.
    let exts = unsafe { instance.enumerate_device_extension_properties(pd) }.unwrap_or_default();
    let mut missing: Vec<String> = REQUIRED_EXTENSIONS
        .iter()
        .filter(|req| {
            !exts
                .iter()
                .any(|e| e.extension_name_as_c_str().ok() == Some(**req))
        })
        .map(|req| req.to_string_lossy().into_owned())
        .collect();
    // SAFETY: as above.
    let props = unsafe { instance.get_physical_device_properties(pd) };
    if props.api_version < vk::API_VERSION_1_2 {
        missing.push(format!(
            "Vulkan 1.2 (device has {})",
            version_string(props.api_version)
        ));
    }
    if missing.is_empty() {
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut fas = vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default();
        let mut frt = vk::PhysicalDeviceRayTracingPipelineFeaturesKHR::default();
        let mut f2 = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f12)
            .push_next(&mut fas)
            .push_next(&mut frt);
        // SAFETY: the chain's structs live on this stack frame.
        unsafe { instance.get_physical_device_features2(pd, &mut f2) };
        if f12.buffer_device_address == 0 {
            missing.push("feature bufferDeviceAddress".into());
        }
        if f12.scalar_block_layout == 0 {
            missing.push("feature scalarBlockLayout".into());
        }
        if fas.acceleration_structure == 0 {
            missing.push("feature accelerationStructure".into());
        }
        if frt.ray_tracing_pipeline == 0 {
            missing.push("feature rayTracingPipeline".into());
        }
    }
    missing
}

/// The queue family to use: one with compute and graphics if there is one (the view
/// draws the points the simulation leaves on the device, on the same queue), else the
/// first with compute. Returns the family and whether it has graphics.
fn compute_queue_family(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Option<(u32, bool)> {
    // SAFETY: `pd` comes from this instance.
    let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    let both = vk::QueueFlags::COMPUTE | vk::QueueFlags::GRAPHICS;
    let with = |flags: vk::QueueFlags| families.iter().position(|f| f.queue_flags.contains(flags));
    with(both)
        .map(|i| (i as u32, true))
        .or_else(|| with(vk::QueueFlags::COMPUTE).map(|i| (i as u32, false)))
}

/// Whether `pd` draws points wider than one pixel.
fn has_large_points(instance: &ash::Instance, pd: vk::PhysicalDevice) -> bool {
    // SAFETY: plain query.
    unsafe { instance.get_physical_device_features(pd) }.large_points != 0
}

/// Lists every Vulkan device with its ray-tracing support (for `beamtrace info`).
pub fn list_devices() -> GpuResult<Vec<DeviceInfo>> {
    let entry = load_entry()?;
    let instance = create_instance(&entry, false, None)?;
    let result = describe_devices(&instance);
    // SAFETY: nothing created from the instance survives this function.
    unsafe { instance.destroy_instance(None) };
    result
}

fn describe_devices(instance: &ash::Instance) -> GpuResult<Vec<DeviceInfo>> {
    // SAFETY: plain query.
    let pds = unsafe { instance.enumerate_physical_devices() }.vk("vkEnumeratePhysicalDevices")?;
    let mut out = Vec::new();
    for (index, &pd) in pds.iter().enumerate() {
        let missing = missing_rt_support(instance, pd);
        let mut rt = vk::PhysicalDeviceRayTracingPipelinePropertiesKHR::default();
        let mut asp = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
        let mut drv = vk::PhysicalDeviceDriverProperties::default();
        let mut p2 = vk::PhysicalDeviceProperties2::default().push_next(&mut drv);
        if missing.is_empty() {
            p2 = p2.push_next(&mut rt).push_next(&mut asp);
        }
        // SAFETY: the chain's structs live on this stack frame.
        unsafe { instance.get_physical_device_properties2(pd, &mut p2) };
        let props = p2.properties;
        let name = props
            .device_name_as_c_str()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let driver = format!(
            "{} {}",
            drv.driver_name_as_c_str()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            drv.driver_info_as_c_str()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        );
        out.push(DeviceInfo {
            index,
            name,
            kind: device_kind(props.device_type).into(),
            driver,
            api_version: version_string(props.api_version),
            missing,
            max_ray_recursion_depth: rt.max_ray_recursion_depth,
            shader_group_handle_size: rt.shader_group_handle_size,
            max_instance_count: asp.max_instance_count,
            max_primitive_count: asp.max_primitive_count,
            timestamp_period_ns: props.limits.timestamp_period,
        });
    }
    Ok(out)
}

/// The debug messenger that records validation messages into `log`.
fn create_messenger(
    entry: &ash::Entry,
    instance: &ash::Instance,
    log: &ValidationLog,
) -> GpuResult<(ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)> {
    let loader = ext::debug_utils::Instance::new(entry, instance);
    let info = vk::DebugUtilsMessengerCreateInfoEXT::default()
        .message_severity(
            vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                | vk::DebugUtilsMessageSeverityFlagsEXT::ERROR,
        )
        .message_type(
            vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
        )
        .pfn_user_callback(Some(debug_callback))
        .user_data(log as *const ValidationLog as *mut c_void);
    // SAFETY: the boxed log outlives the messenger (destroyed first in Drop).
    let messenger = unsafe { loader.create_debug_utils_messenger(&info, None) }
        .vk("vkCreateDebugUtilsMessengerEXT")?;
    Ok((loader, messenger))
}

/// The device asked for (refused with the reason when it lacks ray tracing), else the
/// best usable one: discrete GPU first, lavapipe last.
fn choose_device(
    instance: &ash::Instance,
    devices: &[DeviceInfo],
    asked: Option<usize>,
) -> GpuResult<usize> {
    if devices.is_empty() {
        return Err(GpuError::NoDevice);
    }
    if let Some(index) = asked {
        let d = devices.get(index).ok_or(GpuError::BadDeviceIndex {
            index,
            count: devices.len(),
        })?;
        if !d.missing.is_empty() {
            return Err(GpuError::Unsupported {
                index,
                name: d.name.clone(),
                reason: format!("it lacks {}", d.missing.join(", ")),
            });
        }
        return Ok(index);
    }
    // SAFETY: plain query.
    let pds = unsafe { instance.enumerate_physical_devices() }.vk("vkEnumeratePhysicalDevices")?;
    let rank = |d: &DeviceInfo| {
        // SAFETY: plain query.
        let p = unsafe { instance.get_physical_device_properties(pds[d.index]) };
        (kind_rank(p.device_type), d.index)
    };
    devices
        .iter()
        .filter(|d| d.missing.is_empty())
        .min_by_key(|d| rank(d))
        .map(|d| d.index)
        .ok_or_else(|| {
            let lines: Vec<String> = devices
                .iter()
                .map(|d| {
                    let missing = d.missing.join(", ");
                    format!("  [{}] {} ({}): missing {missing}", d.index, d.name, d.kind)
                })
                .collect();
            GpuError::NoRayTracing(lines.join("\n"))
        })
}

/// The logical device with one compute queue and the ray-tracing features.
fn create_device(
    instance: &ash::Instance,
    pd: vk::PhysicalDevice,
    queue_family: u32,
    presenting: bool,
) -> GpuResult<ash::Device> {
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default()
        .buffer_device_address(true)
        .scalar_block_layout(true)
        .host_query_reset(true);
    let mut fas =
        vk::PhysicalDeviceAccelerationStructureFeaturesKHR::default().acceleration_structure(true);
    let mut frt =
        vk::PhysicalDeviceRayTracingPipelineFeaturesKHR::default().ray_tracing_pipeline(true);
    let mut features2 = vk::PhysicalDeviceFeatures2::default()
        .features(
            vk::PhysicalDeviceFeatures::default()
                .shader_int64(true)
                .large_points(has_large_points(instance, pd)),
        )
        .push_next(&mut f12)
        .push_next(&mut fas)
        .push_next(&mut frt);
    let priorities = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(queue_family)
        .queue_priorities(&priorities)];
    let mut ext_names: Vec<*const c_char> =
        REQUIRED_EXTENSIONS.iter().map(|e| e.as_ptr()).collect();
    if presenting {
        ext_names.push(khr::swapchain::NAME.as_ptr());
    }
    let device_info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&ext_names)
        .push_next(&mut features2);
    // SAFETY: every pointer in device_info lives until the call returns.
    unsafe { instance.create_device(pd, &device_info, None) }.vk("vkCreateDevice")
}

/// The limits the SBT layout, AS builds, launches and bindings depend on.
fn read_limits(instance: &ash::Instance, pd: vk::PhysicalDevice, queue_family: u32) -> RtLimits {
    let mut rt_props = vk::PhysicalDeviceRayTracingPipelinePropertiesKHR::default();
    let mut as_props = vk::PhysicalDeviceAccelerationStructurePropertiesKHR::default();
    let mut subgroup = vk::PhysicalDeviceSubgroupProperties::default();
    let mut p2 = vk::PhysicalDeviceProperties2::default()
        .push_next(&mut rt_props)
        .push_next(&mut as_props)
        .push_next(&mut subgroup);
    // SAFETY: the chain lives on this frame.
    unsafe { instance.get_physical_device_properties2(pd, &mut p2) };
    let props = p2.properties;
    // SAFETY: plain query.
    let qf_props = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    RtLimits {
        handle_size: rt_props.shader_group_handle_size,
        handle_alignment: rt_props.shader_group_handle_alignment,
        base_alignment: rt_props.shader_group_base_alignment,
        max_recursion_depth: rt_props.max_ray_recursion_depth,
        scratch_alignment: as_props.min_acceleration_structure_scratch_offset_alignment,
        timestamp_period_ns: props.limits.timestamp_period,
        timestamps_supported: qf_props[queue_family as usize].timestamp_valid_bits > 0,
        max_launch_width: props.limits.max_compute_work_group_count[0]
            .saturating_mul(props.limits.max_compute_work_group_size[0])
            .min(rt_props.max_ray_dispatch_invocation_count),
        max_storage_buffer_range: props.limits.max_storage_buffer_range as u64,
        subgroup_size: subgroup.subgroup_size.max(1),
    }
}

/// The memory allocator and the command pool; on error nothing of them is left.
fn create_allocator_and_pool(
    instance: &ash::Instance,
    device: &ash::Device,
    pd: vk::PhysicalDevice,
    queue_family: u32,
) -> GpuResult<(Allocator, vk::CommandPool)> {
    let allocator = Allocator::new(&AllocatorCreateDesc {
        instance: instance.clone(),
        device: device.clone(),
        physical_device: pd,
        debug_settings: AllocatorDebugSettings::default(),
        buffer_device_address: true,
        allocation_sizes: AllocationSizes::default(),
    })
    .map_err(|e| GpuError::Alloc {
        name: "allocator".into(),
        size: 0,
        message: e.to_string(),
    })?;
    let pool_info = vk::CommandPoolCreateInfo::default()
        .queue_family_index(queue_family)
        .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
    // SAFETY: valid device; on error the allocator is dropped before the caller
    // destroys the device.
    let pool = unsafe { device.create_command_pool(&pool_info, None) }.vk("vkCreateCommandPool")?;
    Ok((allocator, pool))
}

impl Context {
    /// Opens a ray-tracing capable device: the one asked for, else the best (discrete GPU
    /// first, lavapipe last). With `validation`, the Khronos layer runs with
    /// synchronization validation and its messages are recorded.
    pub fn new(options: &ContextOptions) -> GpuResult<Arc<Context>> {
        Context::open(options, None)
    }

    /// Like [`new`](Self::new), with the instance extensions a window's surface needs
    /// and VK_KHR_swapchain on the device.
    pub(crate) fn open(
        options: &ContextOptions,
        presentation: Option<Presentation<'_>>,
    ) -> GpuResult<Arc<Context>> {
        let entry = load_entry()?;
        let instance = create_instance(&entry, options.validation, presentation)?;
        // From here on, `partial` cleans up if anything fails.
        let mut partial = PartialInstance {
            instance,
            debug: None,
        };
        let validation_log = Box::<ValidationLog>::default();
        if options.validation {
            let messenger = create_messenger(&entry, &partial.instance, &validation_log)?;
            partial.debug = Some(messenger);
        }
        let devices = describe_devices(&partial.instance)?;
        let chosen = choose_device(&partial.instance, &devices, options.device_index)?;
        let info = &devices[chosen];
        // SAFETY: plain query.
        let pd = unsafe { partial.instance.enumerate_physical_devices() }
            .vk("vkEnumeratePhysicalDevices")?[chosen];
        let (queue_family, supports_graphics) = compute_queue_family(&partial.instance, pd)
            .ok_or_else(|| GpuError::Unsupported {
                index: chosen,
                name: info.name.clone(),
                reason: "it has no compute queue".into(),
            })?;
        let presenting = presentation.is_some();
        let large_points = has_large_points(&partial.instance, pd);
        let device = create_device(&partial.instance, pd, queue_family, presenting)?;
        let limits = read_limits(&partial.instance, pd, queue_family);
        let memory_heaps = read_heaps(&partial.instance, pd);
        let (allocator, command_pool) =
            match create_allocator_and_pool(&partial.instance, &device, pd, queue_family) {
                Ok(made) => made,
                Err(e) => {
                    // SAFETY: nothing else was created from the device.
                    unsafe { device.destroy_device(None) };
                    return Err(e);
                }
            };
        // SAFETY: family/index exist (we created exactly this queue).
        let queue = unsafe { device.get_device_queue(queue_family, 0) };
        let accel = khr::acceleration_structure::Device::new(&partial.instance, &device);
        let rt = khr::ray_tracing_pipeline::Device::new(&partial.instance, &device);
        let (instance, debug) = partial.hand_over();
        Ok(Arc::new(Context {
            _entry: entry,
            instance,
            debug,
            validation_log,
            device,
            accel,
            rt,
            queue: Mutex::new(queue),
            command_pool: Mutex::new(command_pool),
            allocator: ManuallyDrop::new(Mutex::new(allocator)),
            limits,
            memory_heaps,
            device_name: info.name.clone(),
            driver_info: info.driver.clone(),
            api_version: info.api_version.clone(),
            is_cpu: info.kind == device_kind(vk::PhysicalDeviceType::CPU) && !options.gpu_paths,
            unified_memory: !options.separate_memory && shares_host_memory(info),
            supports_graphics,
            presenting,
            large_points,
            queue_family,
            physical_device: pd,
        }))
    }
}

/// A CPU driver or an integrated GPU: its device memory is the host's.
fn shares_host_memory(info: &DeviceInfo) -> bool {
    [
        vk::PhysicalDeviceType::CPU,
        vk::PhysicalDeviceType::INTEGRATED_GPU,
    ]
    .iter()
    .any(|&t| info.kind == device_kind(t))
}

impl Context {
    /// The validation layer's warnings and errors so far (empty when validation is off).
    pub fn validation_messages(&self) -> Vec<String> {
        self.validation_log
            .messages
            .lock()
            .map(|m| m.clone())
            .unwrap_or_default()
    }

    pub fn validation_enabled(&self) -> bool {
        self.debug.is_some()
    }

    /// The Vulkan loader's entry points, for the window surface.
    #[cfg(feature = "window")]
    pub(crate) fn entry(&self) -> &ash::Entry {
        &self._entry
    }

    /// Bytes of device memory in live allocations now: a loop that frees what it makes
    /// keeps this flat.
    pub fn allocated_bytes(&self) -> u64 {
        self.allocator
            .lock()
            .map(|a| a.generate_report().total_allocated_bytes)
            .unwrap_or(0)
    }

    /// How many live allocations the allocator holds now.
    pub fn allocation_count(&self) -> usize {
        self.allocator
            .lock()
            .map(|a| a.generate_report().allocations.len())
            .unwrap_or(0)
    }

    /// Refuses graphics work on a queue that cannot do it.
    pub(crate) fn require_graphics(&self, what: &str) -> GpuResult<()> {
        if self.supports_graphics {
            Ok(())
        } else {
            Err(GpuError::Usage(format!(
                "{what} needs a queue with graphics, and device {} has none beside its \
                 compute queue; choose another with --device (see `beamtrace info`)",
                self.device_name
            )))
        }
    }

    /// The raw device, for the modules of `gpu`.
    pub(crate) fn raw(&self) -> &ash::Device {
        &self.device
    }

    /// Waits until the device has finished all submitted work.
    pub fn wait_idle(&self) -> GpuResult<()> {
        // SAFETY: holding the queue lock, as vkDeviceWaitIdle requires external sync of queues.
        let _q = self.queue.lock().map_err(|_| poisoned())?;
        unsafe { self.device.device_wait_idle() }.vk("vkDeviceWaitIdle")
    }
}

pub(crate) fn poisoned() -> GpuError {
    GpuError::Usage("a GPU lock was poisoned by an earlier panic".into())
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: every resource holding an Arc<Context> is gone, so nothing uses the
        // device; destroy in reverse creation order.
        unsafe {
            let _ = self.device.device_wait_idle();
            if let Ok(pool) = self.command_pool.lock() {
                self.device.destroy_command_pool(*pool, None);
            }
            ManuallyDrop::drop(&mut self.allocator);
            self.device.destroy_device(None);
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

type Messenger = (ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT);

/// Owns the instance (and messenger) until the Context takes them over: dropped on an
/// error path, it destroys them; `hand_over` gives them away without destroying.
struct PartialInstance {
    instance: ash::Instance,
    debug: Option<Messenger>,
}

impl PartialInstance {
    fn hand_over(self) -> (ash::Instance, Option<Messenger>) {
        // Not dropped: the Context destroys what it takes over.
        let mut this = std::mem::ManuallyDrop::new(self);
        (this.instance.clone(), this.debug.take())
    }
}

impl Drop for PartialInstance {
    fn drop(&mut self) {
        // SAFETY: only reached on an error path, before any device object exists.
        unsafe {
            if let Some((loader, messenger)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

/// Validation messages reported by any context of this process so far, including
/// those raised while a context was being destroyed (leaked objects).
pub fn validation_messages_total() -> usize {
    VALIDATION_TOTAL.load(std::sync::atomic::Ordering::SeqCst)
}

static VALIDATION_TOTAL: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
