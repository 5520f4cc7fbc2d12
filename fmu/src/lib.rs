//! beamtrace as an OSMP sensor model: the FMI 2.0 co-simulation functions, exported
//! from a shared library that `beamtrace fmu` packages with its `modelDescription.xml`
//! (`beamtrace::osi::osmp`) and the scene and sensor files.
//!
//! Every exported function catches panics: a failure reaches the master as `fmi2Error`
//! (or `fmi2Fatal` for a panic) with a message through its logger, never as a crash of
//! the host process. Model exchange, FMU state and derivatives are not supported and
//! answer `fmi2Error`.

mod model;

use beamtrace::osi::osmp::vr;
use model::Model;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

type Status = c_int;
const OK: Status = 0;
const WARNING: Status = 1;
const ERROR: Status = 3;
const FATAL: Status = 4;
/// fmi2Type's fmi2CoSimulation.
const CO_SIMULATION: c_int = 1;

type Logger =
    unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char, ...);

/// fmi2CallbackFunctions.
#[repr(C)]
pub struct Callbacks {
    logger: Option<Logger>,
    allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    step_finished: Option<unsafe extern "C" fn(*mut c_void, Status)>,
    component_environment: *mut c_void,
}

/// An instance as the master holds it.
struct Instance {
    name: CString,
    logger: Option<Logger>,
    environment: *mut c_void,
    model: Model,
}

impl Instance {
    /// Sends `message` to the master's logger (FMI's message is a printf format: `%` is
    /// doubled).
    fn log(&self, status: Status, message: &str) {
        let Some(logger) = self.logger else { return };
        let category = if status >= ERROR {
            c"logError"
        } else {
            c"logAll"
        };
        let text = CString::new(message.replace('%', "%%").replace('\0', " ")).unwrap_or_default();
        // SAFETY: the master gave this logger for this instance's life.
        unsafe {
            logger(
                self.environment,
                self.name.as_ptr(),
                status,
                category.as_ptr(),
                text.as_ptr(),
            )
        };
    }
}

/// Runs `f` on the instance, turning its error into a logged fmi2Error and a panic into
/// fmi2Fatal.
fn with(c: *mut c_void, f: impl FnOnce(&mut Instance) -> Result<Status, String>) -> Status {
    if c.is_null() {
        return ERROR;
    }
    // SAFETY: `c` is what fmi2Instantiate returned and the master has not freed it.
    let instance = unsafe { &mut *(c as *mut Instance) };
    match catch_unwind(AssertUnwindSafe(|| f(instance))) {
        Ok(Ok(status)) => status,
        Ok(Err(message)) => {
            instance.log(ERROR, &message);
            ERROR
        }
        Err(_) => {
            instance.log(FATAL, "beamtrace panicked (a bug: please report it)");
            FATAL
        }
    }
}

/// `file:///dir` or `file:/dir` → `/dir` (percent-escapes decoded).
fn resource_path(uri: &str) -> PathBuf {
    let rest = uri
        .strip_prefix("file://")
        .or_else(|| uri.strip_prefix("file:"))
        .unwrap_or(uri);
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    PathBuf::from(String::from_utf8_lossy(&out).into_owned())
}

fn text(s: *const c_char) -> String {
    match s.is_null() {
        true => String::new(),
        // SAFETY: FMI strings are NUL-terminated.
        false => unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned(),
    }
}

#[no_mangle]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

#[no_mangle]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

/// # Safety
/// FMI 2.0: the strings are NUL-terminated, `functions` points at the master's callbacks.
#[no_mangle]
pub unsafe extern "C" fn fmi2Instantiate(
    name: *const c_char,
    kind: c_int,
    _guid: *const c_char,
    resources: *const c_char,
    functions: *const Callbacks,
    _visible: c_int,
    _logging_on: c_int,
) -> *mut c_void {
    let made = catch_unwind(AssertUnwindSafe(|| {
        let callbacks = unsafe { functions.as_ref() };
        let instance = Instance {
            name: CString::new(text(name)).unwrap_or_default(),
            logger: callbacks.and_then(|c| c.logger),
            environment: callbacks.map_or(std::ptr::null_mut(), |c| c.component_environment),
            model: Model::new(resource_path(&text(resources))),
        };
        if kind != CO_SIMULATION {
            instance.log(
                ERROR,
                "beamtrace is a co-simulation FMU; model exchange is not supported",
            );
            return std::ptr::null_mut();
        }
        Box::into_raw(Box::new(instance)) as *mut c_void
    }));
    made.unwrap_or(std::ptr::null_mut())
}

/// # Safety
/// `c` is an instance fmi2Instantiate returned, not yet freed.
#[no_mangle]
pub unsafe extern "C" fn fmi2FreeInstance(c: *mut c_void) {
    if !c.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            drop(unsafe { Box::from_raw(c as *mut Instance) })
        }));
    }
}

#[no_mangle]
pub extern "C" fn fmi2SetDebugLogging(
    c: *mut c_void,
    _on: c_int,
    _n: usize,
    _cats: *const *const c_char,
) -> Status {
    with(c, |_| Ok(OK))
}

#[no_mangle]
pub extern "C" fn fmi2SetupExperiment(
    c: *mut c_void,
    _tol_defined: c_int,
    _tol: f64,
    _start: f64,
    _stop_defined: c_int,
    _stop: f64,
) -> Status {
    with(c, |_| Ok(OK))
}

#[no_mangle]
pub extern "C" fn fmi2EnterInitializationMode(c: *mut c_void) -> Status {
    with(c, |_| Ok(OK))
}

#[no_mangle]
pub extern "C" fn fmi2ExitInitializationMode(c: *mut c_void) -> Status {
    with(c, |i| i.model.open().map(|()| OK))
}

#[no_mangle]
pub extern "C" fn fmi2Terminate(c: *mut c_void) -> Status {
    with(c, |_| Ok(OK))
}

#[no_mangle]
pub extern "C" fn fmi2Reset(c: *mut c_void) -> Status {
    with(c, |_| {
        Err("fmi2Reset is not supported: free the instance and instantiate a new one".into())
    })
}

/// The `n` value references at `vr` as a slice (empty for none).
///
/// # Safety
/// `vr` points at `n` value references.
unsafe fn refs<'a>(vr: *const u32, n: usize) -> &'a [u32] {
    match vr.is_null() || n == 0 {
        true => &[],
        false => unsafe { std::slice::from_raw_parts(vr, n) },
    }
}

/// # Safety
/// `vr` and `value` point at `n` elements each.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetInteger(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    value: *mut c_int,
) -> Status {
    with(c, |i| {
        for (k, &r) in unsafe { refs(vr, n) }.iter().enumerate() {
            let v = i
                .model
                .integers
                .get(r as usize)
                .ok_or(format!("no Integer of value reference {r}"))?;
            unsafe { *value.add(k) = *v };
        }
        Ok(OK)
    })
}

/// # Safety
/// `vr` and `value` point at `n` elements each.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetInteger(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    value: *const c_int,
) -> Status {
    with(c, |i| {
        for (k, &r) in unsafe { refs(vr, n) }.iter().enumerate() {
            let settable = [
                vr::SENSOR_VIEW_IN_LO,
                vr::SENSOR_VIEW_IN_HI,
                vr::SENSOR_VIEW_IN_SIZE,
                vr::SEED,
            ];
            if !settable.contains(&r) {
                return Err(format!("Integer {r} is not an input or parameter"));
            }
            i.model.integers[r as usize] = unsafe { *value.add(k) };
        }
        Ok(OK)
    })
}

/// # Safety
/// `vr` and `value` point at `n` elements each.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetBoolean(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    value: *mut c_int,
) -> Status {
    with(c, |i| {
        for (k, &r) in unsafe { refs(vr, n) }.iter().enumerate() {
            if r != vr::VALID {
                return Err(format!("no Boolean of value reference {r}"));
            }
            unsafe { *value.add(k) = c_int::from(i.model.valid) };
        }
        Ok(OK)
    })
}

/// The model's strings, kept for the master to read until the next call.
static STRINGS: std::sync::Mutex<Vec<CString>> = std::sync::Mutex::new(Vec::new());

/// # Safety
/// `vr` and `value` point at `n` elements each.
#[no_mangle]
pub unsafe extern "C" fn fmi2GetString(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    value: *mut *const c_char,
) -> Status {
    with(c, |i| {
        let mut kept = STRINGS.lock().unwrap_or_else(|e| e.into_inner());
        kept.clear();
        for (k, &r) in unsafe { refs(vr, n) }.iter().enumerate() {
            let s = match r {
                vr::SENSOR => &i.model.sensor,
                vr::SCENE => &i.model.scene,
                _ => return Err(format!("no String of value reference {r}")),
            };
            kept.push(CString::new(s.as_str()).unwrap_or_default());
            unsafe { *value.add(k) = kept[kept.len() - 1].as_ptr() };
        }
        Ok(OK)
    })
}

/// # Safety
/// `vr` and `value` point at `n` elements each, the strings NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn fmi2SetString(
    c: *mut c_void,
    vr: *const u32,
    n: usize,
    value: *const *const c_char,
) -> Status {
    with(c, |i| {
        for (k, &r) in unsafe { refs(vr, n) }.iter().enumerate() {
            let s = text(unsafe { *value.add(k) });
            match r {
                vr::SENSOR => i.model.sensor = s,
                vr::SCENE => i.model.scene = s,
                _ => return Err(format!("no String of value reference {r}")),
            }
        }
        Ok(OK)
    })
}

#[no_mangle]
pub extern "C" fn fmi2DoStep(c: *mut c_void, t: f64, _h: f64, _no_prior: c_int) -> Status {
    with(c, |i| {
        let warnings = i.model.step(t)?;
        for w in &warnings {
            i.log(WARNING, w);
        }
        Ok(if warnings.is_empty() { OK } else { WARNING })
    })
}

/// Functions of FMI 2.0 beamtrace does not support: each answers fmi2Error.
macro_rules! unsupported {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[no_mangle]
        pub extern "C" fn $name(c: *mut c_void, $($arg: $ty),*) -> Status {
            $(let _ = $arg;)*
            with(c, |_| Err(format!("{} is not supported by beamtrace's FMU", stringify!($name))))
        }
    )*};
}

unsupported! {
    fmi2GetReal(vr: *const u32, n: usize, v: *mut f64);
    fmi2SetReal(vr: *const u32, n: usize, v: *const f64);
    fmi2SetBoolean(vr: *const u32, n: usize, v: *const c_int);
    fmi2GetFMUstate(s: *mut *mut c_void);
    fmi2SetFMUstate(s: *mut c_void);
    fmi2FreeFMUstate(s: *mut *mut c_void);
    fmi2SerializedFMUstateSize(s: *mut c_void, n: *mut usize);
    fmi2SerializeFMUstate(s: *mut c_void, b: *mut u8, n: usize);
    fmi2DeSerializeFMUstate(b: *const u8, n: usize, s: *mut *mut c_void);
    fmi2GetDirectionalDerivative(u: *const u32, nu: usize, z: *const u32, nz: usize, dv: *const f64, dz: *mut f64);
    fmi2SetRealInputDerivatives(vr: *const u32, n: usize, o: *const c_int, v: *const f64);
    fmi2GetRealOutputDerivatives(vr: *const u32, n: usize, o: *const c_int, v: *mut f64);
    fmi2CancelStep();
    fmi2GetStatus(k: c_int, s: *mut Status);
    fmi2GetRealStatus(k: c_int, v: *mut f64);
    fmi2GetIntegerStatus(k: c_int, v: *mut c_int);
    fmi2GetBooleanStatus(k: c_int, v: *mut c_int);
    fmi2GetStringStatus(k: c_int, v: *mut *const c_char);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_locations_become_paths() {
        assert_eq!(
            resource_path("file:///tmp/a%20b/resources"),
            PathBuf::from("/tmp/a b/resources")
        );
        assert_eq!(resource_path("file:/tmp/x"), PathBuf::from("/tmp/x"));
        assert_eq!(
            resource_path("file://localhost/tmp/x"),
            PathBuf::from("/tmp/x")
        );
    }
}
