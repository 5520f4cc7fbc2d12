"""Type stub of the beamtrace package: what editors complete and type checkers check."""

from typing import Dict, Iterator, List, Optional, Sequence, Tuple, TypedDict, Union

import numpy as np
import numpy.typing as npt

__version__: str

Frame = Union[npt.NDArray[np.void], Dict[str, npt.NDArray[np.void]]]

class Error(Exception):
    """What beamtrace refused or could not do; the message names the file, line or
    field, and what to do."""

class FieldInfo(TypedDict):
    key: str  # what `run --fields` lists
    name: str  # the array's field name
    dtype: str  # NumPy type string, little-endian
    unit: str
    meaning: str

class SensorInfo(TypedDict):
    name: str  # the rig member's name, or the sensor's
    sensor: str  # the sensor's own name (preset or file)
    beams: int
    channels: int  # rings
    columns: int  # firings per frame
    grid: Optional[Tuple[int, int]]  # (rings, columns) when the beams form a grid
    frame_rate_hz: float
    max_returns: int
    subrays: int  # rays per beam (1 with thin=True)
    wavelength_nm: float
    min_range_m: float
    max_range_m: float
    fields: List[FieldInfo]

class Simulator:
    """A scene on the GPU with a sensor (or a vehicle rig), simulating frames. Every
    keyword's default is `beamtrace run`'s default for the same option."""

    dtype: np.dtype
    """The frames' NumPy dtype: the fields in order, packed little-endian."""
    time: Optional[float]
    """When the last frame returned began (s of scenario time)."""

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
    ) -> None: ...
    def frame(self, t: Optional[float] = None, *, organized: Optional[bool] = None) -> Frame:
        """The frame that begins at scenario time `t` (s); by default the one after the
        last. A sensor at f Hz gives its frame floor(t·f), begun at t. `organized`:
        (rings, columns) with NaN cells, as `run --organized`."""
    def frames(
        self, n: int, *, t: Optional[float] = None, organized: Optional[bool] = None
    ) -> Iterator[Tuple[float, Frame]]:
        """`n` frames one period apart as (time in s, frame), two in flight."""
    def set_pose(self, position: Sequence[float] = (0.0, 0.0, 0.0), yaw_deg: float = 0.0) -> None:
        """The vehicle at `position` (m, world) heading `yaw_deg` (deg) from the next frame."""
    def set_object_pose(
        self,
        name: str,
        position: Sequence[float],
        yaw_deg: float = 0.0,
        *,
        roll_deg: float = 0.0,
        pitch_deg: float = 0.0,
    ) -> None:
        """The scene node `name` held at `position` (m, world) turned by roll, pitch,
        yaw (deg) from the next frame."""
    def sensor_info(self) -> Union[SensorInfo, Dict[str, SensorInfo]]:
        """The sensor's description; for a rig, sensor name → description."""
    @property
    def device(self) -> str:
        """The Vulkan device the frames run on."""
    def validation_messages(self) -> List[str]:
        """The Vulkan validation layer's messages so far (validate=True)."""
    def close(self) -> None:
        """Waits for the GPU and ends the simulator; raises Error if the validation
        layer reported anything."""
    def __enter__(self) -> "Simulator": ...
    def __exit__(self, *exc: object) -> None: ...
