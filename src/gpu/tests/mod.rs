//! Tests of the Vulkan layer on whatever ray-tracing device exists (lavapipe in CI), with
//! the validation layer on.

use super::*;
use ash::vk;
use std::sync::Arc;

fn ctx() -> Arc<Context> {
    Context::new(&ContextOptions {
        device_index: None,
        validation: true,
        ..Default::default()
    })
    .expect("a ray-tracing Vulkan device (run scripts/setup.sh)")
}

fn assert_clean(ctx: &Context) {
    let m = ctx.validation_messages();
    assert!(m.is_empty(), "validation messages: {m:#?}");
}

const DOUBLER: &str = r#"
#version 460
#extension GL_EXT_scalar_block_layout : require
layout(local_size_x = 64) in;
struct Item { vec3 v; uint id; float w; };
layout(set = 0, binding = 0, scalar) buffer Items { Item items[]; };
layout(push_constant, scalar) uniform Push { uint count; float factor; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= count) return;
    items[i].v *= factor;
    items[i].id += 1u;
}
"#;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, Debug, PartialEq)]
struct Item {
    v: [f32; 3],
    id: u32,
    w: f32,
}

fn item_layout() -> HostLayout {
    HostLayout {
        name: "Item",
        members: vec![
            ("v", std::mem::offset_of!(Item, v) as u32),
            ("id", std::mem::offset_of!(Item, id) as u32),
            ("w", std::mem::offset_of!(Item, w) as u32),
        ],
        size: std::mem::size_of::<Item>() as u32,
    }
}

#[test]
fn validation_layer_reports_misuse() {
    // The tests rely on validation messages failing them: show that a real misuse is
    // caught (a zero-sized buffer breaks VUID-VkBufferCreateInfo-size-00912).
    let ctx = ctx();
    assert!(ctx.validation_enabled());
    let info = vk::BufferCreateInfo::default()
        .size(0)
        .usage(vk::BufferUsageFlags::STORAGE_BUFFER);
    // SAFETY: deliberately invalid create info for the validation layer to catch; the
    // buffer (if the driver made one) is destroyed right away.
    unsafe {
        if let Ok(b) = ctx.raw().create_buffer(&info, None) {
            ctx.raw().destroy_buffer(b, None);
        }
    }
    assert!(
        !ctx.validation_messages().is_empty(),
        "the validation layer did not report a zero-sized buffer"
    );
}

#[test]
fn reflection_checks_struct_layouts() {
    let src = ShaderSources::new().add("double.comp", DOUBLER);
    let spirv = compile(&src, "double.comp", &[]).expect("compiles");
    assert_eq!(
        check_layout(&[&spirv], &item_layout()).expect("layout matches"),
        1
    );
    let mut wrong = item_layout();
    wrong.members[2].1 = 20;
    let err = check_layout(&[&spirv], &wrong).unwrap_err().to_string();
    assert!(err.contains("Item") && err.contains("double.comp"), "{err}");
    let mut wrong_size = item_layout();
    wrong_size.size = 32;
    assert!(check_layout(&[&spirv], &wrong_size).is_err());
    let bindings = spirv.bindings().expect("bindings");
    let b = &bindings[&(0, 0)];
    assert_eq!(b.ty, vk::DescriptorType::STORAGE_BUFFER);
    assert_eq!(spirv.push_constant_size().expect("push"), 8);
}

#[test]
fn shader_errors_name_the_file_and_line() {
    let src = ShaderSources::new().add("bad.comp", "#version 460\nvoid main() { oops; }\n");
    let err = compile(&src, "bad.comp", &[])
        .err()
        .expect("fails")
        .to_string();
    assert!(err.contains("bad.comp") && err.contains(":2"), "{err}");
}

fn items() -> Vec<Item> {
    (0..100)
        .map(|i| Item {
            v: [i as f32, 1.0, -2.0],
            id: i,
            w: 0.5,
        })
        .collect()
}

/// The doubler's push constants: count, factor.
fn doubler_push(count: u32, factor: f32) -> Vec<u8> {
    [count.to_le_bytes(), factor.to_le_bytes()].concat()
}

/// The doubler pipeline with descriptor sets bound to a host-visible copy of `items`.
fn doubler(ctx: &Arc<Context>) -> (Arc<ComputePipeline>, Arc<DescriptorSets>, Arc<Buffer>) {
    let src = ShaderSources::new().add("double.comp", DOUBLER);
    let spirv = compile(&src, "double.comp", &[]).expect("compiles");
    let pipeline = ComputePipeline::new(ctx, &spirv).expect("pipeline");
    let buf = Buffer::from_slice(ctx, "items", &items(), BufferUsageFlags::STORAGE_BUFFER)
        .expect("buffer");
    let buf = Arc::new(buf);
    let mut sets = pipeline.descriptor_sets().expect("sets");
    sets.bind_buffer(0, 0, &buf).expect("bind");
    (Arc::new(pipeline), Arc::new(sets), buf)
}

fn assert_tripled(out: &[Item]) {
    for (a, b) in items().iter().zip(out) {
        assert_eq!(b.v, [a.v[0] * 3.0, 3.0, -6.0]);
        assert_eq!(b.id, a.id + 1);
        assert_eq!(b.w, 0.5);
    }
}

#[test]
fn compute_pipeline_runs_with_push_constants() {
    let ctx = ctx();
    let (pipeline, sets, buf) = doubler(&ctx);
    assert_eq!(pipeline.workgroup_size, (64, 1, 1));
    let push = doubler_push(100, 3.0);
    run_once(&ctx, |rec| {
        rec.dispatch(&pipeline, &sets, &push, [2, 1, 1])?;
        rec.barrier_to_host();
        Ok(())
    })
    .expect("dispatch");
    assert_tripled(&buf.read(100).expect("read"));
    // A wrong push-constant size is refused before anything is recorded, naming both
    // sizes.
    let err = run_once(&ctx, |rec| {
        rec.dispatch(&pipeline, &sets, &push[..4], [1, 1, 1])
    })
    .expect_err("4 bytes of push constants accepted")
    .to_string();
    assert!(
        err.contains("push constants") && err.contains('8') && err.contains('4'),
        "{err}"
    );
    // Binding a buffer to a slot the shader does not declare is refused.
    let mut other = pipeline.descriptor_sets().expect("sets");
    let err = other
        .bind_buffer(0, 5, &buf)
        .expect_err("binding 5")
        .to_string();
    assert!(err.contains("binding 5"), "{err}");
    // Sets with a binding left empty are refused at record time.
    let other = Arc::new(other);
    let err = run_once(&ctx, |rec| {
        rec.dispatch(&pipeline, &other, &push, [1, 1, 1])
    })
    .expect_err("unbound binding 0")
    .to_string();
    assert!(err.contains("nothing is bound"), "{err}");
    drop((pipeline, sets, buf, other));
    assert_clean(&ctx);
}

/// Submits the doubler with factor 3 over all 100 items, without waiting.
fn submit_tripling(
    ctx: &Arc<Context>,
    pipeline: &Arc<ComputePipeline>,
    sets: &Arc<DescriptorSets>,
) -> CommandRecorder {
    let mut rec = CommandRecorder::new(ctx).expect("recorder");
    rec.submit(|r| {
        r.dispatch(pipeline, sets, &doubler_push(100, 3.0), [2, 1, 1])?;
        r.barrier_to_host();
        Ok(())
    })
    .expect("submit");
    rec
}

#[test]
fn a_submission_keeps_what_it_uses_and_refuses_host_access_until_waited() {
    let ctx = ctx();
    let (pipeline, mut sets, buf) = doubler(&ctx);
    let mut rec = submit_tripling(&ctx, &pipeline, &sets);
    // In flight: the host may neither read the buffer nor rebind the sets.
    let err = buf
        .read::<Item>(100)
        .expect_err("read while in flight")
        .to_string();
    assert!(
        err.contains("items") && err.contains("not yet waited"),
        "{err}"
    );
    assert!(exclusive(&mut sets, "the sets").is_err());
    // Dropping every owner's reference while in flight frees nothing the GPU uses.
    let weak_pipeline = Arc::downgrade(&pipeline);
    let weak_sets = Arc::downgrade(&sets);
    drop(pipeline);
    drop(sets);
    assert!(weak_pipeline.upgrade().is_some() && weak_sets.upgrade().is_some());
    rec.wait().expect("wait");
    assert!(weak_pipeline.upgrade().is_none() && weak_sets.upgrade().is_none());
    assert_tripled(&buf.read(100).expect("read after the wait"));
    drop(rec);
    drop(buf);
    assert_clean(&ctx);
}

#[test]
fn dropping_a_recorder_in_flight_waits_and_releases() {
    let ctx = ctx();
    let (pipeline, sets, buf) = doubler(&ctx);
    let rec = submit_tripling(&ctx, &pipeline, &sets);
    drop((pipeline, sets));
    drop(rec);
    assert_tripled(&buf.read(100).expect("read after the drop"));
    drop(buf);
    assert_clean(&ctx);
}

#[test]
fn synchronization_validation_reports_a_missing_barrier() {
    // The frame tests rely on synchronization validation: show that it is on by making
    // a read-after-write hazard (a copy of what a dispatch wrote, with no barrier).
    let ctx = ctx();
    let (pipeline, sets, buf) = doubler(&ctx);
    let copy = Buffer::new(
        &ctx,
        "copy",
        buf.size(),
        BufferUsageFlags::TRANSFER_DST,
        MemoryLocation::GpuToCpu,
    )
    .map(Arc::new)
    .expect("copy");
    run_once(&ctx, |rec| {
        rec.dispatch(&pipeline, &sets, &doubler_push(100, 3.0), [2, 1, 1])?;
        rec.copy_buffer(&buf, &copy, buf.size())
    })
    .expect("run");
    let m = ctx.validation_messages();
    assert!(
        m.iter().any(|m| m.contains("SYNC-HAZARD")),
        "no synchronization hazard reported: {m:#?}"
    );
}

const RGEN: &str = r#"
#version 460
#extension GL_EXT_ray_tracing : require
layout(set = 0, binding = 0) uniform accelerationStructureEXT tlas;
layout(set = 0, binding = 1) buffer Out { float t[]; };
layout(location = 0) rayPayloadEXT float hit_t;
void main() {
    uint i = gl_LaunchIDEXT.x;
    // Rays along +x from y = i - 2: instances sit at y = 0 and y = 2 (unit triangles).
    vec3 o = vec3(0.0, float(i) - 2.0, 0.25);
    traceRayEXT(tlas, gl_RayFlagsOpaqueEXT, 0xFF, 0, 0, 0, o, 0.0, vec3(1, 0, 0), 100.0, 0);
    t[i] = hit_t;
}
"#;
const RMISS: &str = r#"
#version 460
#extension GL_EXT_ray_tracing : require
layout(location = 0) rayPayloadInEXT float hit_t;
void main() { hit_t = -1.0; }
"#;
const RCHIT: &str = r#"
#version 460
#extension GL_EXT_ray_tracing : require
layout(location = 0) rayPayloadInEXT float hit_t;
void main() { hit_t = gl_HitTEXT + 1000.0 * float(gl_InstanceCustomIndexEXT); }
"#;

fn translate(x: f32, y: f32) -> [[f32; 4]; 3] {
    [[1.0, 0.0, 0.0, x], [0.0, 1.0, 0.0, y], [0.0, 0.0, 1.0, 0.0]]
}

/// The test's pipeline: one ray per invocation along +x, its hit's t (plus 1000 × the
/// instance's custom index) written out.
fn one_hit_pipeline(ctx: &Arc<Context>) -> RayTracingPipeline {
    let src = ShaderSources::new()
        .add("t.rgen", RGEN)
        .add("t.rmiss", RMISS)
        .add("t.rchit", RCHIT);
    let rgen = compile(&src, "t.rgen", &[]).expect("rgen");
    let rmiss = compile(&src, "t.rmiss", &[]).expect("rmiss");
    let rchit = compile(&src, "t.rchit", &[]).expect("rchit");
    RayTracingPipeline::new(
        ctx,
        &RayTracingDesc {
            raygen: &rgen,
            miss: vec![&rmiss],
            hit_groups: vec![HitGroup {
                closest_hit: Some(&rchit),
                any_hit: None,
            }],
            hit_records: Vec::new(),
            max_recursion_depth: 1,
        },
    )
    .expect("pipeline")
}

/// One triangle in the plane x = 0 spanning y in [-0.5, 0.5], z in [0, 1], as a BLAS.
fn one_triangle_blas(ctx: &Arc<Context>) -> (Vec<Arc<AccelerationStructure>>, BlasStats) {
    let verts: [[f32; 3]; 3] = [[0.0, -0.5, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 1.0]];
    let idx: [u32; 3] = [0, 1, 2];
    let input = BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
    let vb = Buffer::upload(ctx, "verts", &verts, input).expect("vb");
    let ib = Buffer::upload(ctx, "idx", &idx, input).expect("ib");
    build_blases(
        ctx,
        &[vec![TriangleGeometry {
            vertex_address: vb.device_address(),
            vertex_count: 3,
            index_address: ib.device_address(),
            triangle_count: 1,
            opaque: true,
        }]],
    )
    .expect("blas")
}

#[test]
fn ray_tracing_pipeline_tlas_build_refit_and_sbt_alignment() {
    let ctx = ctx();
    let pipeline = one_hit_pipeline(&ctx);
    // SBT: every region aligned to the base alignment, strides to the handle alignment,
    // raygen size equal to its stride, callable region empty.
    let l = ctx.limits;
    let regions = pipeline.sbt_regions();
    for (addr, stride, _) in &regions[..3] {
        assert_eq!(addr % l.base_alignment as u64, 0);
        assert_eq!(stride % l.handle_alignment as u64, 0);
        assert!(*stride >= l.handle_size as u64);
    }
    assert_eq!(regions[0].1, regions[0].2);
    assert_eq!(regions[3], (0, 0, 0));

    let (blases, stats) = one_triangle_blas(&ctx);
    assert!(stats.compacted_bytes > 0 && stats.compacted_bytes <= stats.built_bytes);
    let instance = |x: f32, y: f32, id: u32| TlasInstance {
        transform: translate(x, y),
        custom_index: id,
        mask: 0xff,
        sbt_offset: 0,
        blas: blases[0].clone(),
    };
    let mut tlas = Tlas::new(&ctx, 4).expect("tlas");
    let out = Buffer::new(
        &ctx,
        "out",
        5 * 4,
        BufferUsageFlags::STORAGE_BUFFER,
        MemoryLocation::GpuToCpu,
    )
    .map(Arc::new)
    .expect("out");
    let mut sets = pipeline.descriptor_sets().expect("sets");
    sets.bind_tlas(0, 0, &tlas).expect("bind tlas");
    sets.bind_buffer(0, 1, &out).expect("bind out");
    let (pipeline, sets) = (Arc::new(pipeline), Arc::new(sets));
    let ts = Timestamps::new(&ctx, 2).expect("timestamps");
    let mut rec = CommandRecorder::new(&ctx).expect("recorder");
    let mut frame = |instances: &[TlasInstance]| {
        rec.run(|r| {
            ts.reset(r);
            ts.write(r, 0)?;
            let what = tlas.update(r, instances)?;
            r.trace_rays(&pipeline, &sets, &[], [5, 1])?;
            r.barrier_to_host();
            ts.write(r, 1)?;
            Ok(what)
        })
        .expect("frame")
    };
    let what = frame(&[instance(5.0, 0.0, 1), instance(7.0, 2.0, 2)]);
    assert_eq!(what, TlasUpdate::Built);
    let t: Vec<f32> = out.read(5).expect("read");
    assert_eq!(t, vec![-1.0, -1.0, 1005.0, -1.0, 2007.0]);
    // Same instances, new transforms: a refit.
    let what = frame(&[instance(3.0, 0.0, 1), instance(9.0, 2.0, 2)]);
    assert_eq!(what, TlasUpdate::Refitted);
    let t: Vec<f32> = out.read(5).expect("read");
    assert_eq!(t, vec![-1.0, -1.0, 1003.0, -1.0, 2009.0]);
    // A different set of instances: a full build.
    let what = frame(&[instance(4.0, -1.0, 3)]);
    assert_eq!(what, TlasUpdate::Built);
    let t: Vec<f32> = out.read(5).expect("read");
    assert_eq!(t, vec![-1.0, 3004.0, -1.0, -1.0, -1.0]);
    let times = ts.read_ns().expect("timestamps");
    assert!(times[1] >= times[0]);
    // More instances than the capacity are refused.
    let five: Vec<TlasInstance> = (0..5).map(|i| instance(1.0, i as f32, 1)).collect();
    assert!(rec.run(|r| tlas.update(r, &five)).is_err());
    drop(rec);
    drop(pipeline);
    drop(tlas);
    drop(blases);
    drop(sets);
    assert_clean(&ctx);
}

#[test]
fn bad_device_index_is_a_clear_error() {
    let err = Context::new(&ContextOptions {
        device_index: Some(99),
        validation: false,
        ..Default::default()
    })
    .err()
    .expect("no device 99")
    .to_string();
    assert!(
        err.contains("99") && err.contains("beamtrace info"),
        "{err}"
    );
}
