//! The view's keyboard and mouse map: one list, printed by `beamtrace view --help` and
//! shown in the window on F1.

/// (key, what it does), in the order the help shows them.
pub const KEYS: &[(&str, &str)] = &[
    ("F1", "show or hide this help"),
    ("Space", "pause or resume the simulation"),
    ("N", "step one frame (while paused)"),
    (
        "T",
        "the scene's time: real time (frames skipped when late) or every frame",
    ),
    ("C / Shift+C", "next / previous colouring"),
    ("P / Shift+P", "next / previous sensor preset"),
    ("+ / -", "bigger / smaller points"),
    ("M", "point size in pixels or metres"),
    ("H", "show or hide the HUD and legend"),
    ("G", "show or hide the scene's triangles under the points"),
    ("V", "vsync on or off"),
    ("S", "save a screenshot (beamtrace-NNNN.png)"),
    ("R", "reset the camera"),
    ("Esc / Q", "quit"),
    ("left drag", "orbit the camera"),
    ("right or middle drag", "pan"),
    ("wheel", "zoom"),
];

/// The map as aligned lines of text.
pub fn help_lines() -> Vec<String> {
    let width = KEYS.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    KEYS.iter()
        .map(|(k, what)| format!("{k:<width$}  {what}"))
        .collect()
}
