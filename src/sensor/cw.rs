//! A continuous-wave (amplitude-modulated, phase) sensor's measurement settings; the
//! measurement itself is `model::cw`.

/// Speed of light in vacuum (m/s).
pub const SPEED_OF_LIGHT: f64 = 299_792_458.0;

/// How the phase of the received wave is measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CwSampling {
    /// The phasor's own argument.
    Ideal,
    /// `samples` samples of the wave at evenly spaced phases, each with Gaussian noise of
    /// σ = `sample_noise` (signal units: a frame's settings scale the sensor's
    /// `sample_noise`, given relative to its detection threshold), and the discrete
    /// Fourier estimate.
    Dft { samples: u32, sample_noise: f32 },
}

/// A continuous-wave sensor's measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CwSettings {
    /// f1, whose phase gives the range, and f2, which resolves f1's ambiguity (Hz).
    pub frequencies_hz: [f64; 2],
    pub sampling: CwSampling,
    /// a, b, c of the phase bias a L² + b L + c (rad; L in signal units).
    pub phase_bias: [f64; 3],
    /// The received amplitude L (signal units) past which the bias stops growing: the
    /// receiver saturates, so nearer or brighter surfaces shift no farther (0: never).
    pub bias_saturation: f64,
}

impl CwSettings {
    /// The URG-04LX's (paper 002 §III-B): 46.55 and 53.2 MHz, 30 samples.
    pub const URG_04LX_FREQUENCIES_HZ: [f64; 2] = [46.55e6, 53.2e6];

    /// The range one frequency measures modulo: c / 2f.
    pub fn ambiguity_m(f: f64) -> f64 {
        SPEED_OF_LIGHT / (2.0 * f)
    }

    /// The farthest range the two frequencies tell apart: c / 2|f1 − f2|.
    pub fn unambiguous_m(&self) -> f64 {
        let [f1, f2] = self.frequencies_hz;
        SPEED_OF_LIGHT / (2.0 * (f1 - f2).abs())
    }
}

impl CwSettings {
    /// The Hokuyo URG-04LX (paper 002): 46.55 and 53.2 MHz, 30 samples over 15 periods.
    /// Its sample noise (σ = 0.3 × the detection threshold per sample) gives a range σ
    /// of about 4 cm for a return at the threshold (1 % at 4 m, the sheet's accuracy
    /// there) and about a millimetre for a white target at 1 m. Its phase bias, b = −0.01
    /// rad per unit of received amplitude, puts a white surface at 0.5 m 1.8 cm farther
    /// than a black one beside it (paper 002 Fig. 1's staircase); an illustrative value
    /// where no published calibration exists — fit a real unit's. The bias stops growing
    /// at L = 4 (a white target at 0.47 m): 2.1 cm at most, inside the sheet's ±30 mm
    /// accuracy from its 20 mm minimum range to 1 m (URG-04LX specification); without
    /// the limit a white wall at 6 cm would read 1.3 m too far.
    pub const URG_04LX: CwSettings = CwSettings {
        frequencies_hz: Self::URG_04LX_FREQUENCIES_HZ,
        sampling: CwSampling::Dft {
            samples: 30,
            sample_noise: 0.3,
        },
        phase_bias: [0.0, -0.01, 0.0],
        bias_saturation: 4.0,
    };

    /// Checks every value; `max_range` must lie within the unambiguous range.
    pub fn validate(&self, max_range: f32) -> Result<(), super::SensorError> {
        use super::domain::MODULATION;
        let [f1, f2] = self.frequencies_hz;
        MODULATION.check("cw.modulation_mhz[0]", f1 / 1e6)?;
        MODULATION.check("cw.modulation_mhz[1]", f2 / 1e6)?;
        if f1 == f2 {
            return Err(super::SensorError::invalid(
                "cw.modulation_mhz",
                "the two frequencies are equal, so nothing resolves the first one's \
                 ambiguity: give two different frequencies",
            ));
        }
        if f64::from(max_range) > self.unambiguous_m() {
            return Err(super::SensorError::invalid(
                "cw.modulation_mhz",
                format!(
                    "the two frequencies tell ranges apart only up to c/2|f1 − f2| = {:.2} m, \
                     less than range.max {max_range} m: bring the frequencies closer or \
                     lower range.max",
                    self.unambiguous_m()
                ),
            ));
        }
        if let CwSampling::Dft {
            samples,
            sample_noise,
        } = self.sampling
        {
            super::domain::CW_SAMPLES.check("cw.samples", f64::from(samples))?;
            super::domain::CW_SAMPLE_NOISE.check("cw.sample_noise", f64::from(sample_noise))?;
        }
        for (i, c) in self.phase_bias.iter().enumerate() {
            super::domain::PHASE_BIAS.check(&format!("cw.phase_bias[{i}]"), *c)?;
        }
        super::domain::BIAS_SATURATION.check("cw.bias_saturation", self.bias_saturation)?;
        Ok(())
    }
}
