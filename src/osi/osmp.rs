//! OSMP (OSI Sensor Model Packaging): how an OSI sensor model sits in an FMI 2.0
//! co-simulation FMU. OSI messages cross the FMU boundary as serialized protobuf in
//! memory the sender owns; three integer variables per message carry the address (its
//! low and high 32 bits, `base.lo`/`base.hi`) and the size in bytes. The receiver
//! reads the bytes during the call that hands them over; the sender keeps them valid
//! until its next `fmi2DoStep` (so an output buffer lives from one step to the next).
//!
//! This module holds what the FMU (the `fmu/` crate) and its packager
//! (`beamtrace fmu`) must agree on: the value references and the
//! `modelDescription.xml`.

/// The FMU's model identifier: its shared library is `binaries/linux64/<id>.so`.
pub const MODEL_IDENTIFIER: &str = "beamtrace";

/// OSMP's version this packaging follows.
pub const OSMP_VERSION: &str = "1.4.0";

/// Integer value references.
pub mod vr {
    pub const SENSOR_VIEW_IN_LO: u32 = 0;
    pub const SENSOR_VIEW_IN_HI: u32 = 1;
    pub const SENSOR_VIEW_IN_SIZE: u32 = 2;
    pub const SENSOR_DATA_OUT_LO: u32 = 3;
    pub const SENSOR_DATA_OUT_HI: u32 = 4;
    pub const SENSOR_DATA_OUT_SIZE: u32 = 5;
    /// The noise seed (parameter).
    pub const SEED: u32 = 6;
    /// OSMP's `count`: how many SensorData messages the FMU has written.
    pub const COUNT: u32 = 7;
    /// Boolean: OSMP's `valid`, whether the outputs hold a SensorData.
    pub const VALID: u32 = 0;
    /// String: the sensor, a preset name or a YAML file in `resources/` (parameter).
    pub const SENSOR: u32 = 0;
    /// String: the glTF scene, a file in `resources/` (parameter).
    pub const SCENE: u32 = 1;
}

/// A 64-bit address split into OSMP's two 32-bit integers (lo, hi).
pub fn split_address(address: u64) -> (i32, i32) {
    (address as u32 as i32, (address >> 32) as u32 as i32)
}

/// The address OSMP's two 32-bit integers give.
pub fn join_address(lo: i32, hi: i32) -> u64 {
    u64::from(lo as u32) | (u64::from(hi as u32) << 32)
}

/// `modelDescription.xml` of the FMU: co-simulation, the OSMP annotations and the
/// binary variables, and the parameters with `sensor` and `scene` defaulting to what was
/// packaged. `guid` identifies this build of the FMU.
pub fn model_description(guid: &str, sensor: &str, scene: &str, seed: u64) -> String {
    let (major, minor, patch) = super::OSI_VERSION;
    let osi = format!("{major}.{minor}.{patch}");
    let vars = binary_variables(&osi) + &other_variables(sensor, scene, seed);
    // Outputs in the order of the variables above (1-based): SensorData's three, valid,
    // count.
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="beamtrace" guid="{{{guid}}}" description="beamtrace: physically based LiDAR simulation as an OSI sensor model (SensorView in, SensorData out)" generationTool="beamtrace {version}" variableNamingConvention="structured" numberOfEventIndicators="0">
  <CoSimulation modelIdentifier="{MODEL_IDENTIFIER}" canHandleVariableCommunicationStepSize="true" canBeInstantiatedOnlyOncePerProcess="false" canNotUseMemoryManagementFunctions="true"/>
  <LogCategories>
    <Category name="logAll" description="every message"/>
    <Category name="logError" description="errors"/>
  </LogCategories>
  <VendorAnnotations>
    <Tool name="net.pmsf.osmp" xmlns:osmp="http://xsd.pmsf.net/OSISensorModelPackaging"><osmp:osmp version="{OSMP_VERSION}" osi-version="{osi}"/></Tool>
  </VendorAnnotations>
  <ModelVariables>
{vars}  </ModelVariables>
  <ModelStructure>
    <Outputs>
      <Unknown index="4"/>
      <Unknown index="5"/>
      <Unknown index="6"/>
      <Unknown index="7"/>
      <Unknown index="8"/>
    </Outputs>
    <InitialUnknowns>
      <Unknown index="4"/>
      <Unknown index="5"/>
      <Unknown index="6"/>
    </InitialUnknowns>
  </ModelStructure>
</fmiModelDescription>
"#,
        version = env!("CARGO_PKG_VERSION"),
    )
}

/// The OSMP binary variables: SensorView in, SensorData out, each as base.lo, base.hi and
/// size, annotated with their OSI message type.
fn binary_variables(osi: &str) -> String {
    let mime =
        |kind: &str| format!("application/x-open-simulation-interface; type={kind}; version={osi}");
    let binary = |vr: u32, name: &str, role: &str, causality: &str, kind: &str| {
        let (start, initial) = match causality {
            "input" => (r#" start="0""#, ""),
            _ => ("", r#" initial="calculated""#),
        };
        format!(
            r#"    <ScalarVariable name="{name}.{role}" valueReference="{vr}" causality="{causality}" variability="discrete"{initial}>
      <Integer{start}/>
      <Annotations>
        <Tool name="net.pmsf.osmp" xmlns:osmp="http://xsd.pmsf.net/OSISensorModelPackaging"><osmp:osmp-binary-variable name="{name}" role="{role}" mime-type="{mime}"/></Tool>
      </Annotations>
    </ScalarVariable>
"#,
            mime = mime(kind)
        )
    };
    let mut vars = String::new();
    for (vr, role) in [
        (vr::SENSOR_VIEW_IN_LO, "base.lo"),
        (vr::SENSOR_VIEW_IN_HI, "base.hi"),
        (vr::SENSOR_VIEW_IN_SIZE, "size"),
    ] {
        vars += &binary(vr, "OSMPSensorViewIn", role, "input", "SensorView");
    }
    for (vr, role) in [
        (vr::SENSOR_DATA_OUT_LO, "base.lo"),
        (vr::SENSOR_DATA_OUT_HI, "base.hi"),
        (vr::SENSOR_DATA_OUT_SIZE, "size"),
    ] {
        vars += &binary(vr, "OSMPSensorDataOut", role, "output", "SensorData");
    }
    vars
}

/// `valid`, `count` and the parameters, the strings' and the seed's start values as
/// packaged.
fn other_variables(sensor: &str, scene: &str, seed: u64) -> String {
    let xml = |s: &str| {
        s.replace('&', "&amp;")
            .replace('"', "&quot;")
            .replace('<', "&lt;")
    };
    format!(
        r#"    <ScalarVariable name="valid" valueReference="{valid}" causality="output" variability="discrete" initial="exact">
      <Boolean start="false"/>
    </ScalarVariable>
    <ScalarVariable name="count" valueReference="{count}" causality="output" variability="discrete" initial="exact">
      <Integer start="0"/>
    </ScalarVariable>
    <ScalarVariable name="sensor" valueReference="{sensor_vr}" causality="parameter" variability="fixed" description="a preset name or a sensor YAML file in resources/">
      <String start="{sensor}"/>
    </ScalarVariable>
    <ScalarVariable name="scene" valueReference="{scene_vr}" causality="parameter" variability="fixed" description="the glTF scene, a file in resources/">
      <String start="{scene}"/>
    </ScalarVariable>
    <ScalarVariable name="seed" valueReference="{seed_vr}" causality="parameter" variability="fixed" description="the seed of the noise's random draws">
      <Integer start="{seed}"/>
    </ScalarVariable>
"#,
        valid = vr::VALID,
        count = vr::COUNT,
        sensor_vr = vr::SENSOR,
        scene_vr = vr::SCENE,
        seed_vr = vr::SEED,
        sensor = xml(sensor),
        scene = xml(scene),
        seed = seed.min(i32::MAX as u64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_split_and_join() {
        let a = 0x7f12_3456_89ab_cdef_u64;
        let (lo, hi) = split_address(a);
        assert_eq!(join_address(lo, hi), a);
        assert_eq!(split_address(0x1_0000_0000), (0, 1));
    }
}
