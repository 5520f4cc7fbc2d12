//! The counter-based random numbers of DESIGN §1: every draw is a pure function of
//! (seed, frame, beam, stream), so a run gives the same bytes on any device and in any
//! order. `shaders/rng.glsl` is the bit-identical GLSL twin (integer part); a GPU test
//! compares the two.

/// One round of the PCG hash (Jarzynski & Olano, "Hash Functions for GPU Rendering", 2020).
pub fn pcg(v: u32) -> u32 {
    let state = v.wrapping_mul(747_796_405).wrapping_add(2_891_336_453);
    let word = ((state >> ((state >> 28) + 4)) ^ state).wrapping_mul(277_803_737);
    (word >> 22) ^ word
}

/// Hash of a draw's coordinates.
pub fn hash(seed: u64, frame: u32, beam: u32, stream: u32) -> u32 {
    let mut h = pcg((seed as u32) ^ 0x9e37_79b9);
    h = pcg(h ^ (seed >> 32) as u32);
    h = pcg(h ^ frame);
    h = pcg(h ^ beam);
    pcg(h ^ stream)
}

/// Uniform in [0, 1) with 24 bits: exactly representable in f32 on every device.
pub fn uniform(x: u32) -> f32 {
    (x >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// Standard normal by Box–Muller from two hashes.
pub fn gaussian(a: u32, b: u32) -> f32 {
    let u1 = uniform(a).max(1e-7);
    let u2 = uniform(b);
    (-2.0 * u1.ln()).sqrt() * (std::f32::consts::TAU * u2).cos()
}

/// Stream numbers: which draw of a beam a hash belongs to.
pub mod stream {
    /// Sub-ray `sub`'s stratified jitter, horizontal (+0) and vertical (+1).
    pub fn jitter(sub: u32) -> u32 {
        2 + 2 * sub
    }
    /// Draw `j` of echo `echo`'s noise.
    pub fn echo_noise(echo: u32, j: u32) -> u32 {
        0x10000 + 8 * echo + j
    }
    /// The beam's detection level, a pair of hashes (+0, +1) for one normal draw.
    pub fn detection_level(j: u32) -> u32 {
        0x28000 + j
    }
    /// Draw `j` of the beam's false alarms.
    pub fn false_alarm(j: u32) -> u32 {
        0x20000 + j
    }
    /// IMU sample draws (the sample index is the hash's frame and beam): axis `axis`
    /// (0–2 accelerometer x y z, 3–5 gyroscope), kind `j` (0 white noise, 1 bias
    /// step), each a pair of hashes (+0, +1) for one normal draw.
    pub fn imu(axis: u32, j: u32) -> u32 {
        0x3000_0000 + 4 * axis + 2 * j
    }
    /// Draw `j` of sub-ray `sub`'s rain or snow particles: 0 their count, 1 + 2k and
    /// 2 + 2k particle k's range and size (k < 7; above every other stream).
    pub fn particle(sub: u32, j: u32) -> u32 {
        0x4000_0000 + 16 * sub + j
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_is_in_unit_interval_and_roughly_flat() {
        let mut hist = [0u32; 10];
        for i in 0..100_000 {
            let u = uniform(hash(42, 0, i, 7));
            assert!((0.0..1.0).contains(&u));
            hist[(u * 10.0) as usize] += 1;
        }
        for h in hist {
            assert!((9_500..10_500).contains(&h), "{hist:?}");
        }
    }

    #[test]
    fn gaussian_has_unit_variance() {
        let n = 100_000;
        let (mut s, mut s2) = (0.0f64, 0.0f64);
        for i in 0..n {
            let g = gaussian(hash(1, 2, i, 0), hash(1, 2, i, 1)) as f64;
            s += g;
            s2 += g * g;
        }
        let mean = s / n as f64;
        let var = s2 / n as f64 - mean * mean;
        assert!(
            mean.abs() < 0.02 && (var - 1.0).abs() < 0.02,
            "{mean} {var}"
        );
    }

    #[test]
    fn every_coordinate_changes_the_hash() {
        let base = hash(5, 6, 7, 8);
        assert_ne!(base, hash(5 + (1 << 32), 6, 7, 8));
        assert_ne!(base, hash(4, 6, 7, 8));
        assert_ne!(base, hash(5, 7, 7, 8));
        assert_ne!(base, hash(5, 6, 8, 8));
        assert_ne!(base, hash(5, 6, 7, 9));
        // Known value pins the function: the GLSL twin is checked against this too.
        assert_eq!(pcg(0), 129_708_002);
    }
}
