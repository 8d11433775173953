//! The wire format of the values a [`DistGraph`](super::graph::DistGraph)
//! holds, one per vertex: a fixed number of bytes per value, written into and
//! read from flat buffers. Ghost exchanges and migrations move values as
//! such buffers (no serialisation framework, no length prefixes): the sizes
//! of all messages are known from the vertex counts agreed at setup.
//!
//! Implemented for the primitive numbers, `bool`, arrays `[T; N]` and tuples
//! of up to four implementing types. An application type implements it by
//! writing its fields one after the other (an opaque `N`-byte element, as the
//! C API uses, copies its bytes).

/// A vertex value of fixed size on the wire.
pub trait GraphValue: Clone + Send + Sync + 'static {
    /// Bytes one value takes in a buffer.
    const BYTES: usize;
    /// Writes the value into `out` (exactly [`Self::BYTES`] bytes).
    fn write(&self, out: &mut [u8]);
    /// Reads a value written by [`Self::write`] (`bytes` has exactly
    /// [`Self::BYTES`] bytes).
    fn read(bytes: &[u8]) -> Self;
}

macro_rules! number_value {
    ($($t:ty),*) => {$(
        impl GraphValue for $t {
            const BYTES: usize = std::mem::size_of::<$t>();
            #[inline]
            fn write(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            #[inline]
            fn read(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
        }
    )*};
}
number_value!(f32, f64, i8, i16, i32, i64, i128, u8, u16, u32, u64, u128, usize, isize);

impl GraphValue for bool {
    const BYTES: usize = 1;
    #[inline]
    fn write(&self, out: &mut [u8]) {
        out[0] = u8::from(*self);
    }
    #[inline]
    fn read(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

impl<T: GraphValue + Copy, const N: usize> GraphValue for [T; N] {
    const BYTES: usize = T::BYTES * N;
    #[inline]
    fn write(&self, out: &mut [u8]) {
        for (x, o) in self.iter().zip(out.chunks_exact_mut(T::BYTES.max(1))) {
            x.write(o);
        }
    }
    #[inline]
    fn read(bytes: &[u8]) -> Self {
        std::array::from_fn(|i| T::read(&bytes[i * T::BYTES..(i + 1) * T::BYTES]))
    }
}

macro_rules! tuple_value {
    ($($name:ident $idx:tt),+) => {
        impl<$($name: GraphValue),+> GraphValue for ($($name,)+) {
            const BYTES: usize = 0 $(+ $name::BYTES)+;
            #[allow(unused_assignments)]
            #[inline]
            fn write(&self, out: &mut [u8]) {
                let mut at = 0;
                $(
                    self.$idx.write(&mut out[at..at + $name::BYTES]);
                    at += $name::BYTES;
                )+
            }
            #[allow(unused_assignments)]
            #[inline]
            fn read(bytes: &[u8]) -> Self {
                let mut at = 0;
                ($({
                    let v = $name::read(&bytes[at..at + $name::BYTES]);
                    at += $name::BYTES;
                    v
                },)+)
            }
        }
    };
}
tuple_value!(A 0);
tuple_value!(A 0, B 1);
tuple_value!(A 0, B 1, C 2);
tuple_value!(A 0, B 1, C 2, D 3);

/// Appends the values of `items` to `out`, one after the other.
pub(crate) fn pack<'a, T: GraphValue>(items: impl Iterator<Item = &'a T>, out: &mut Vec<u8>) {
    for v in items {
        let at = out.len();
        out.resize(at + T::BYTES, 0);
        v.write(&mut out[at..]);
    }
}

/// The values of a buffer written by [`pack`].
pub(crate) fn unpack<T: GraphValue>(bytes: &[u8]) -> Vec<T> {
    if T::BYTES == 0 {
        return Vec::new();
    }
    bytes.chunks_exact(T::BYTES).map(T::read).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_bit_exact() {
        let vals = [(1.5f64, -0.0f64), (f64::MIN_POSITIVE, f64::NAN)];
        let mut buf = Vec::new();
        pack(vals.iter(), &mut buf);
        assert_eq!(buf.len(), 2 * 16);
        let back: Vec<(f64, f64)> = unpack(&buf);
        for (a, b) in vals.iter().zip(&back) {
            assert_eq!(a.0.to_bits(), b.0.to_bits());
            assert_eq!(a.1.to_bits(), b.1.to_bits());
        }
        let arr = [[1u8, 2, 3], [4, 5, 6]];
        let mut buf = Vec::new();
        pack(arr.iter(), &mut buf);
        assert_eq!(buf, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(unpack::<[u8; 3]>(&buf), arr.to_vec());
        let mixed = (7u32, true, -3i16);
        let mut buf = Vec::new();
        pack(std::iter::once(&mixed), &mut buf);
        assert_eq!(<(u32, bool, i16)>::BYTES, 7);
        assert_eq!(unpack::<(u32, bool, i16)>(&buf), vec![mixed]);
    }
}
