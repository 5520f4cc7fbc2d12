"""beamtrace: physically based LiDAR simulation on Vulkan ray tracing, in Python.

Frames come back as NumPy structured arrays whose fields are the fields of
``beamtrace run --fields`` (beamtrace's own by default: x, y, z in m, intensity, …),
bit for bit the values ``run`` writes into its PCD files for the same options::

    import beamtrace
    sim = beamtrace.Simulator(sensor="vlp-16", thin=True)
    frame = sim.frame()                  # the points of frame 0
    print(frame["x"], frame["intensity"])

Every keyword's default is ``beamtrace run``'s default for the same option, so
``Simulator(...)`` and ``run`` with the same options give the same frame. Errors are
:class:`beamtrace.Error`, carrying beamtrace's message (file, line, field, what to do).
See docs/python.md for the whole API and examples.
"""

from __future__ import annotations

import json
import warnings
from importlib.metadata import PackageNotFoundError, version
from typing import Dict, Iterator, Optional, Sequence, Tuple, Union

import numpy as np

from ._native import Error, NativeSession

__all__ = ["Error", "Simulator", "__version__"]

try:
    __version__ = version("beamtrace")
except PackageNotFoundError:  # imported from the source tree
    __version__ = "unknown"

Frame = Union[np.ndarray, Dict[str, np.ndarray]]


class Simulator:
    """A scene on the GPU with a sensor (or a vehicle rig), simulating frames.

    scene:       glTF scene (.gltf/.glb); default: the scenario's scene, else the
                 bundled street (scenes/street.glb below the working directory).
    sensor:      a preset name (``beamtrace sensors``) or a sensor YAML file;
                 default "os1-128", as ``run``.
    rig:         a vehicle rig YAML file instead of ``sensor``: frames are then dicts
                 of sensor name → array.
    scenario:    a scenario YAML file (vehicle track, object keyframes, weather).
    thin:        one ray per beam instead of the beam's sub-rays (faster; no footprint).
    ideal:       no measurement noise.
    return_mode: the return mode instead of the sensor's default ("strongest", "last",
                 "dual", …, as ``run --return-mode``); one the device lacks is an error.
    seed:        seed of the noise; same seed, same bytes.
    sun:         True (the default sun, azimuth 135°, elevation 45°), False (night), or
                 (azimuth_deg, elevation_deg[, irradiance]).
    weather:     "clear", a preset ("fog", "light-rain", …) or media
                 ("fog:visibility=300,rain:rate=10"), as ``run --weather``.
    materials:   IR material database YAML; default the built-in one.
    material_map: glTF material name → IR material YAML.
    strict_materials: unmapped materials are an error instead of a warning.
    fields:      a convention (beamtrace, velodyne, ouster, ouster-native, ros) or a
                 comma-separated list of field keys, as ``run --fields``.
    world:       points in the world frame instead of the sensor's (``run --world``).
    position:    the vehicle's position (x, y, z) in m where no track drives it.
    yaw_deg:     the vehicle's heading (deg, counter-clockwise from +x).
    device:      Vulkan device index (``beamtrace info``); default the best.
    validate:    the Vulkan validation layer on; :meth:`close` raises if it spoke.
    allow_outside_paths: files named inside the scene, sensor or scenario may lie
                 outside their folder.
    flow:        add the scene flow to the fields (flow_x, flow_y, flow_z: the world
                 velocity of the surface each point hit, m/s), as ``run --flow``.
    objects:     label each frame's objects (vehicles, pedestrians, whatever the
                 scenario moves), as ``run --objects``: :attr:`objects` then holds the
                 last frame's.
    """

    def __init__(
        self,
        scene: Optional[str] = None,
        sensor: Optional[str] = None,
        *,
        rig: Optional[str] = None,
        scenario: Optional[str] = None,
        thin: bool = False,
        ideal: bool = False,
        return_mode: Optional[str] = None,
        seed: int = 0,
        sun: Union[bool, Sequence[float]] = True,
        weather: Optional[str] = None,
        materials: Optional[str] = None,
        material_map: Optional[str] = None,
        strict_materials: bool = False,
        fields: str = "beamtrace",
        world: bool = False,
        position: Sequence[float] = (0.0, 0.0, 0.0),
        yaw_deg: float = 0.0,
        device: Optional[int] = None,
        validate: bool = False,
        allow_outside_paths: bool = False,
        objects: bool = False,
        flow: bool = False,
    ) -> None:
        if rig is not None and sensor is not None:
            raise Error("give a sensor or a rig, not both: a rig names its own sensors")
        self._native: Optional[NativeSession] = None
        native = NativeSession(
            scene=_path(scene),
            sensor=_path(sensor) or "os1-128",
            rig=_path(rig),
            scenario=_path(scenario),
            thin=bool(thin),
            ideal=bool(ideal),
            return_mode=return_mode,
            seed=int(seed),
            sun=_sun(sun),
            night=sun is False,
            weather=weather,
            materials=_path(materials),
            material_map=_path(material_map),
            strict_materials=bool(strict_materials),
            fields=fields,
            world=bool(world),
            position=_vec3(position, "position"),
            yaw_deg=float(yaw_deg),
            device=device,
            validate=bool(validate),
            allow_outside_paths=bool(allow_outside_paths),
            objects=bool(objects),
            flow=bool(flow),
        )
        for notice in native.notices():
            warnings.warn(notice, stacklevel=2)
        self._native = native
        self._rig = rig is not None
        self._info = native.info()
        self.dtype = np.dtype(
            {"names": [n for n, _ in native.dtype()], "formats": [t for _, t in native.dtype()]}
        )
        self._next_t = 0.0
        self.time: Optional[float] = None
        """When the last frame returned began (s of scenario time)."""
        self.objects: Optional[Union[list, Dict[str, list]]] = None
        """With ``objects=True``: the last frame's objects, a list of dicts as in
        ``frame_NNNNNN_objects.json`` (``id``, ``class``, ``box`` in the sensor frame at
        the object's points' ``time``, ``box_world``, ``box_world_start``, ``velocity``,
        ``points``, ``visibility``, …); for a rig, sensor name → list."""

    # -- frames -------------------------------------------------------------------

    def frame(self, t: Optional[float] = None, *, organized: Optional[bool] = None) -> Frame:
        """The frame that begins at scenario time ``t`` (s); by default the frame after
        the last one (frame 0 first). A sensor at f Hz gives its frame ⌊t·f⌋ (whose
        number keys its noise) begun at t, so ``t = k / f`` is ``run``'s frame k.

        organized: the sensor's grid, (rings, columns) with NaN cells where a beam has
        no return, as ``run --organized`` (or (returns, rings, columns) for a sensor
        with several returns per beam); default: as the fields' convention does.
        """
        native = self._open()
        if native.in_flight():
            raise Error("a frames() iteration is still running: finish or close it first")
        if t is None:
            t = self._next_t
        native.step(float(t), self._organized(organized))
        return self._take(native.step(None, self._organized(organized)))

    def frames(
        self, n: int, *, t: Optional[float] = None, organized: Optional[bool] = None
    ) -> Iterator[Tuple[float, Frame]]:
        """``n`` successive frames from ``t`` (default: after the last one), one frame
        period apart, as (time in s, frame), with two frames in flight: the GPU computes
        the next frame while the caller uses this one. Ctrl-C stops it."""
        native = self._open()
        start = self._next_t if t is None else float(t)
        period = native.period()
        org = self._organized(organized)
        try:
            if n > 0:
                native.step(start, org)
            for i in range(n):
                nxt = start + (i + 1) * period if i + 1 < n else None
                frame = self._take(native.step(nxt, org))
                yield self.time, frame
        finally:
            if self._native is not None and self._native.in_flight():
                self._native.drain()

    # -- poses --------------------------------------------------------------------

    def set_pose(self, position: Sequence[float] = (0.0, 0.0, 0.0), yaw_deg: float = 0.0) -> None:
        """Stands the vehicle at ``position`` (x, y, z in m, world, z up) heading
        ``yaw_deg`` (deg, counter-clockwise from +x) from the next frame on, as
        ``run --position --yaw``. Not while a scenario's vehicle track drives it."""
        self._open().set_pose(_vec3(position, "position"), float(yaw_deg))

    def set_object_pose(
        self,
        name: str,
        position: Sequence[float],
        yaw_deg: float = 0.0,
        *,
        roll_deg: float = 0.0,
        pitch_deg: float = 0.0,
    ) -> None:
        """Holds the scene node ``name`` (its meshes and everything under it) at
        ``position`` (m, world) turned by roll, pitch, yaw (deg) from the next frame on,
        as a scenario keyframe for that node would; it overrides the scenario's track
        for it."""
        rpy = (float(roll_deg), float(pitch_deg), float(yaw_deg))
        pos = tuple(float(c) for c in _vec3(position, "position"))
        self._open().set_object_pose(str(name), pos, rpy)

    # -- what it simulates -------------------------------------------------------

    def sensor_info(self) -> Dict:
        """The sensor: name, beams, channels (rings), columns, grid (rings, columns) or
        None, frame_rate_hz, max_returns, subrays, wavelength_nm, min_range_m,
        max_range_m, and fields (key, name, dtype, unit, meaning per field). A rig:
        a dict of sensor name → that."""
        if self._rig:
            return {i["name"]: i for i in self._info}
        return self._info[0]

    @property
    def device(self) -> str:
        """The Vulkan device the frames run on."""
        return self._open().device()

    def validation_messages(self) -> list:
        """The Vulkan validation layer's messages so far (``validate=True``)."""
        return self._open().validation_messages()

    # -- lifetime -------------------------------------------------------------------

    def close(self) -> None:
        """Waits for the GPU and ends the simulator; raises :class:`Error` if the
        validation layer reported anything. Frames after it raise."""
        native, self._native = self._native, None
        if native is not None:
            native.close()

    def __enter__(self) -> "Simulator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- inside ---------------------------------------------------------------------

    def _open(self) -> NativeSession:
        if self._native is None:
            raise Error("the simulator is closed: make a new Simulator for more frames")
        return self._native

    def _organized(self, organized: Optional[bool]) -> bool:
        if organized is None:
            return self._open().organized_by_default()
        return bool(organized)

    def _take(self, frames) -> Frame:
        if frames is None:
            raise Error("no frame came back (frames in flight were drained)")
        arrays = {}
        objects = {}
        for name, t, _frame, records, shape, labels in frames:
            arrays[name] = np.frombuffer(records, dtype=self.dtype).reshape(shape)
            if labels is not None:
                objects[name] = json.loads(labels)["objects"]
            self.time = t
        self._next_t = self.time + self._open().period()
        if objects:
            self.objects = objects if self._rig else next(iter(objects.values()))
        if self._rig:
            return arrays
        return next(iter(arrays.values()))


def _path(p) -> Optional[str]:
    return None if p is None else str(p)


def _sun(sun) -> Optional[Tuple[float, float, float]]:
    if sun is True or sun is False or sun is None:
        return None
    values = [float(v) for v in sun]
    if len(values) == 2:
        values.append(1.0)
    if len(values) != 3:
        raise Error("sun: expected (azimuth_deg, elevation_deg[, irradiance])")
    return tuple(values)


def _vec3(v, what: str) -> Tuple[float, float, float]:
    values = tuple(float(c) for c in v)
    if len(values) != 3:
        raise Error(f"{what}: expected (x, y, z) in m, got {len(values)} values")
    return values
