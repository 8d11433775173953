//! A save file's header: the fixed prefix (magic, format, the header's
//! length and hash), the header itself (bincode), and the root's checks
//! when a file is opened.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::plan::array3d::{Box3, GridPlan3, Shape3, Stencil};
use crate::runtime::balancer::SavedSpeeds;
use crate::runtime::comm::{decode, fnv1a};
use crate::runtime::layout::MAX_GHOST;

/// What a save file holds: its first eight bytes say which, so that a
/// grid's file opened as a graph's (or the reverse) is a clear error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A grid, or a `DistArray2`/`DistArray3` ([`Header`]).
    Grid,
    /// A `DistGraph` (`super::graphs`).
    Graph,
}

impl Kind {
    /// The first bytes of its files.
    pub(super) fn magic(self) -> &'static [u8; 8] {
        match self {
            Kind::Grid => b"NUCESAVE",
            Kind::Graph => b"NUCEGRPH",
        }
    }
    fn name(self) -> &'static str {
        match self {
            Kind::Grid => "a grid or array (open it with SavedGrid::open)",
            Kind::Graph => "a graph (open it with SavedGraph::open)",
        }
    }
}

/// The file format this nuce writes (of both kinds). Format 2 added the
/// balancer's speed state at the end of the header ([`SavedSpeeds`]);
/// format 1 files (older nuce) are still read, as files without it.
pub const SAVE_FORMAT: u32 = 2;
/// The oldest format this nuce reads.
const OLDEST_FORMAT: u32 = 1;
/// Magic, format, header length, header hash.
pub(super) const PREFIX: usize = 8 + 4 + 4 + 8;
/// The data start at a multiple of this (file systems' block size).
pub(super) const ALIGN: u64 = 4096;

/// What a save file says of its grid (after the fixed prefix).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Header {
    /// The nuce version that wrote the file.
    pub(super) nuce: String,
    /// The grid's global shape.
    pub(super) shape: Shape3,
    /// The grid's stencil.
    pub(super) stencil: Stencil,
    /// Bytes per cell of each field, in order.
    pub(super) elem_sizes: Vec<usize>,
    /// Whether a cost per cell (f64) follows the fields.
    pub(super) cost: bool,
    /// Ranks that wrote the file.
    pub(super) ranks: usize,
    /// The writing plan's boxes, one per rank: each array in the file is
    /// these boxes' cells one box after another, each in C order.
    pub(super) boxes: Vec<Box3>,
    /// The application's own bytes.
    pub(super) user: Vec<u8>,
    /// Where the first field starts.
    pub(super) data_offset: u64,
    /// Per field (then the cost): the sum of the cells' hashes.
    pub(super) sums: Vec<u64>,
    /// The writing balancer's speed state ([`crate::Grid::checkpoint`]);
    /// none in a plain save and in format 1. Last: see [`read_prefixed`].
    pub(super) speeds: Option<SavedSpeeds>,
}

impl Header {
    /// Bytes per cell of every array in the file, the cost last.
    pub(super) fn arrays(&self) -> Vec<usize> {
        let mut v = self.elem_sizes.clone();
        if self.cost {
            v.push(8);
        }
        v
    }

    /// The file offset of each array, and the file's length.
    pub(super) fn offsets(&self) -> Result<(Vec<u64>, u64)> {
        let (nx, ny, nz) = self.shape;
        let cells = (nx as u64)
            .checked_mul(ny as u64)
            .and_then(|c| c.checked_mul(nz as u64))
            .ok_or_else(|| Error::invalid_input("save file: the grid's size overflows"))?;
        let mut at = self.data_offset;
        let mut offs = Vec::new();
        for e in self.arrays() {
            offs.push(at);
            at = cells
                .checked_mul(e as u64)
                .and_then(|b| b.checked_add(at))
                .ok_or_else(|| Error::invalid_input("save file: the data's size overflows"))?;
        }
        Ok((offs, at))
    }
}

/// The fixed prefix of a file of `kind` and the header.
pub(super) fn prefixed(kind: Kind, head: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(PREFIX + head.len());
    v.extend_from_slice(kind.magic());
    v.extend_from_slice(&SAVE_FORMAT.to_le_bytes());
    v.extend_from_slice(&(head.len() as u32).to_le_bytes());
    v.extend_from_slice(&fnv1a(head).to_le_bytes());
    v.extend_from_slice(head);
    v
}

/// The root's reading of a save file of `kind`: its fixed prefix checked
/// (magic, format, the header's length and hash), the header decoded;
/// returns it with the file's size and where the header ends.
pub(super) fn read_prefixed<H: serde::de::DeserializeOwned>(
    path: &Path,
    kind: Kind,
) -> Result<(H, u64, u64)> {
    use std::io::Read;
    let bad = |m: String| Error::invalid_input(format!("save file {}: {m}", path.display()));
    let mut file = std::fs::File::open(path).map_err(|e| bad(format!("cannot open: {e}")))?;
    let size = file
        .metadata()
        .map_err(|e| bad(format!("cannot read: {e}")))?
        .len();
    let mut pre = [0u8; PREFIX];
    file.read_exact(&mut pre)
        .map_err(|_| bad(format!("{size} bytes: too short for a nuce save file")))?;
    if &pre[..8] != kind.magic() {
        let other = [Kind::Grid, Kind::Graph]
            .into_iter()
            .find(|k| &pre[..8] == k.magic());
        return Err(bad(match other {
            Some(o) => format!(
                "the save file of {}, not of {}",
                o.name(),
                kind.name().split(" (").next().unwrap_or_default()
            ),
            None => "not a nuce save file".into(),
        }));
    }
    let word = |a: usize| u32::from_le_bytes(pre[a..a + 4].try_into().expect("4 bytes"));
    let format = word(8);
    if !(OLDEST_FORMAT..=SAVE_FORMAT).contains(&format) {
        return Err(bad(format!(
            "format {format}; this nuce ({}) reads formats {OLDEST_FORMAT} to {SAVE_FORMAT}",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let len = word(12) as u64;
    if PREFIX as u64 + len > size {
        return Err(bad(format!("truncated ({size} bytes, a header of {len})")));
    }
    let mut head = vec![0u8; len as usize];
    file.read_exact(&mut head)
        .map_err(|e| bad(format!("cannot read the header: {e}")))?;
    let hash = u64::from_le_bytes(pre[16..24].try_into().expect("8 bytes"));
    if fnv1a(&head) != hash {
        return Err(bad(
            "the header does not match its checksum (a corrupt file)".into(),
        ));
    }
    if format == 1 {
        // Format 1 is format 2 without the speeds, the header's last
        // field: bincode's `None` is one zero byte.
        head.push(0);
    }
    let h: H = decode(&head, 0).map_err(|e| bad(format!("unreadable header: {e}")))?;
    Ok((h, size, PREFIX as u64 + len))
}

/// An error unless `speeds`, if any, describe the `ranks` that wrote the
/// file at `path`.
pub(super) fn check_speeds(path: &Path, speeds: Option<&SavedSpeeds>, ranks: usize) -> Result<()> {
    speeds.map_or(Ok(()), |s| {
        s.check(ranks)
            .map_err(|e| Error::invalid_input(format!("save file {}: {e}", path.display())))
    })
}

/// The root's reading and checking of a grid's save file header.
pub(super) fn read_header(path: &Path) -> Result<Header> {
    let bad = |m: String| Error::invalid_input(format!("save file {}: {m}", path.display()));
    let (h, size, head_end): (Header, u64, u64) = read_prefixed(path, Kind::Grid)?;
    check_speeds(path, h.speeds.as_ref(), h.ranks)?;
    let (_, end) = h.offsets().map_err(|e| bad(e.to_string()))?;
    if h.sums.len() != h.arrays().len() || h.data_offset < head_end {
        return Err(bad("an inconsistent header (a corrupt file)".into()));
    }
    if GridPlan3::new("saved", h.shape, h.boxes.clone()).is_err() || h.boxes.len() != h.ranks {
        return Err(bad("its boxes do not tile its grid (a corrupt file)".into()));
    }
    if h.stencil.ghost > MAX_GHOST {
        return Err(bad(format!(
            "ghost width {}: a corrupt file",
            h.stencil.ghost
        )));
    }
    if end > size {
        return Err(bad(format!("truncated ({size} bytes of {end})")));
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::comm::encode;

    #[test]
    fn a_header_round_trips_and_its_offsets_add_up() {
        let h = Header {
            nuce: "x".into(),
            shape: (2, 3, 4),
            stencil: Stencil::seven(1),
            elem_sizes: vec![8, 3],
            cost: true,
            ranks: 2,
            boxes: vec![
                Box3::from_axes([0, 0, 0], [1, 3, 4]),
                Box3::from_axes([1, 0, 0], [1, 3, 4]),
            ],
            user: vec![1, 2, 3],
            data_offset: 4096,
            sums: vec![1, 2, 3],
            speeds: None,
        };
        let (offs, end) = h.offsets().unwrap();
        assert_eq!(offs, vec![4096, 4096 + 24 * 8, 4096 + 24 * 11]);
        assert_eq!(end, 4096 + 24 * 19);
        let bytes = prefixed(Kind::Grid, &encode(&h).unwrap());
        let dir = std::env::temp_dir().join(format!("nuce-save-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("h.nuce");
        let mut file = bytes.clone();
        file.resize(end as usize, 0);
        std::fs::write(&p, &file).unwrap();
        assert_eq!(read_header(&p).unwrap(), h);
        // Truncated, corrupt, another format, not a save file.
        std::fs::write(&p, &file[..file.len() - 1]).unwrap();
        assert!(read_header(&p)
            .unwrap_err()
            .to_string()
            .contains("truncated"));
        let mut corrupt = file.clone();
        corrupt[PREFIX + 2] ^= 1;
        std::fs::write(&p, &corrupt).unwrap();
        assert!(read_header(&p).unwrap_err().to_string().contains("corrupt"));
        let mut other = file.clone();
        other[8] = 9;
        std::fs::write(&p, &other).unwrap();
        assert!(read_header(&p)
            .unwrap_err()
            .to_string()
            .contains("format 9"));
        let mut graph = prefixed(Kind::Graph, &encode(&h).unwrap());
        graph.resize(end as usize, 0);
        std::fs::write(&p, &graph).unwrap();
        assert!(read_header(&p)
            .unwrap_err()
            .to_string()
            .contains("the save file of a graph"));
        std::fs::write(&p, b"hello").unwrap();
        assert!(read_header(&p)
            .unwrap_err()
            .to_string()
            .contains("too short"));
        std::fs::write(&p, [b'x'; 64]).unwrap();
        assert!(read_header(&p)
            .unwrap_err()
            .to_string()
            .contains("not a nuce"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file of `h` in `format` (format 1: the header without its last
    /// byte, the speeds' `None`), padded to its length.
    fn file_of(h: &Header, format: u32) -> Vec<u8> {
        let mut head = encode(h).unwrap();
        if format == 1 {
            assert_eq!(head.pop(), Some(0), "format 1 has no speeds");
        }
        let mut bytes = prefixed(Kind::Grid, &head);
        bytes[8..12].copy_from_slice(&format.to_le_bytes());
        bytes.resize(h.offsets().unwrap().1 as usize, 0);
        bytes
    }

    #[test]
    fn saved_speeds_round_trip_bit_identical_and_format_1_still_loads() {
        use crate::plan::fpm::{SpeedEstimate, SpeedFunction};
        let mut h = Header {
            nuce: "x".into(),
            shape: (2, 1, 1),
            stencil: Stencil::seven(1),
            elem_sizes: vec![8],
            cost: false,
            ranks: 2,
            boxes: vec![
                Box3::from_axes([0, 0, 0], [1, 1, 1]),
                Box3::from_axes([1, 0, 0], [1, 1, 1]),
            ],
            user: vec![],
            data_offset: 4096,
            sums: vec![7],
            speeds: None,
        };
        let dir = std::env::temp_dir().join(format!("nuce-speeds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("h.nuce");
        // An older nuce's file: no speeds.
        std::fs::write(&p, file_of(&h, 1)).unwrap();
        assert_eq!(read_header(&p).unwrap(), h);
        // Speeds with noise and a function: every bit back.
        let f = SpeedFunction::new(&[(10.0, 0.5), (1000.0, 60.25)], 0.03).unwrap();
        let speeds = SavedSpeeds {
            speeds: vec![1.0 / 3.0, 2.0f64.sqrt()],
            estimates: vec![
                SpeedEstimate {
                    mean: 0.1 + 0.2,
                    noise: 0.017,
                },
                SpeedEstimate {
                    mean: 1e-7,
                    noise: 0.0,
                },
            ],
            phase_units: true,
            functions: vec![Some(f), None],
        };
        h.speeds = Some(speeds.clone());
        std::fs::write(&p, file_of(&h, SAVE_FORMAT)).unwrap();
        let back = read_header(&p).unwrap().speeds.unwrap();
        let bits = |s: &SavedSpeeds| -> Vec<u64> {
            let mut v: Vec<u64> = s.speeds.iter().map(|x| x.to_bits()).collect();
            for e in &s.estimates {
                v.extend([e.mean.to_bits(), e.noise.to_bits()]);
            }
            for f in s.functions.iter().flatten() {
                for (x, t) in f.points() {
                    v.extend([x.to_bits(), t.to_bits()]);
                }
                v.push(f.noise().to_bits());
            }
            v
        };
        assert_eq!(back, speeds);
        assert_eq!(bits(&back), bits(&speeds));
        // Speeds of another number of ranks than wrote the file, or not
        // valid speeds, under a valid header checksum: a corrupt file.
        let mut wrong = speeds.clone();
        wrong.speeds.push(1.0);
        h.speeds = Some(wrong);
        std::fs::write(&p, file_of(&h, SAVE_FORMAT)).unwrap();
        let e = read_header(&p).unwrap_err().to_string();
        assert!(
            e.contains("saved speeds of 3 ranks") && e.contains("corrupt"),
            "{e}"
        );
        let mut wrong = speeds;
        wrong.speeds[0] = -1.0;
        h.speeds = Some(wrong);
        std::fs::write(&p, file_of(&h, SAVE_FORMAT)).unwrap();
        let e = read_header(&p).unwrap_err().to_string();
        assert!(e.contains("saved speeds") && e.contains("corrupt"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
