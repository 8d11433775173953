//! The rank's hardware facts: host name, cores, PUs, binding, cache sizes,
//! and the machine's memory ([`machine_memory`]).
//!
//! This is the only module of nuce that touches hwloc (through the `hwloc2`
//! crate). hwloc2 is unmaintained and some of its helpers are unsound: its
//! `Display` for topology objects writes past its buffers and
//! `TopologyObject::name` frees a string it does not own. So this module only
//! reads plain fields (object type, OS index, cpuset bits, cache size) and
//! never formats, names or stores hwloc objects. When hwloc fails, every fact
//! falls back to Linux's `/proc` and `/sys` files, then to
//! [`std::thread::available_parallelism`]; [`topology`] never panics.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// Hardware facts of one rank (serde, gathered at the root with its speed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// Host name (`/proc/sys/kernel/hostname`, else `$HOSTNAME`, else `"unknown"`).
    pub host: String,
    /// Physical cores of the machine (as far as this process may see).
    pub cores: usize,
    /// Processing units (hardware threads) of the machine.
    pub pus: usize,
    /// OS indices of the PUs this process may run on (its binding), ascending.
    pub binding: Vec<usize>,
    /// L1 data cache of the first bound PU, in bytes.
    pub l1_bytes: Option<u64>,
    /// L2 cache of the first bound PU, in bytes.
    pub l2_bytes: Option<u64>,
    /// L3 cache of the first bound PU, in bytes.
    pub l3_bytes: Option<u64>,
}

/// This process's topology: hwloc first, then `/proc` and `/sys`, then
/// `available_parallelism`. Never panics.
///
/// Complexity: one hwloc topology load (a few ms) plus O(PUs) work.
pub fn topology() -> Topology {
    let hw = std::panic::catch_unwind(from_hwloc).ok().flatten();
    let fallback_par = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut t = hw.unwrap_or_else(|| Topology {
        host: String::new(),
        cores: 0,
        pus: 0,
        binding: Vec::new(),
        l1_bytes: None,
        l2_bytes: None,
        l3_bytes: None,
    });
    t.host = host_name();
    if t.binding.is_empty() {
        t.binding = read_to_string("/proc/self/status")
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .and_then(parse_cpu_list)
            })
            .unwrap_or_else(|| (0..fallback_par).collect());
    }
    if t.pus == 0 {
        t.pus = proc_cpuinfo_pus()
            .unwrap_or(fallback_par)
            .max(t.binding.len());
    }
    if t.cores == 0 {
        t.cores = proc_cpuinfo_cores().unwrap_or(t.pus).clamp(1, t.pus.max(1));
    }
    if t.l1_bytes.is_none() && t.l2_bytes.is_none() && t.l3_bytes.is_none() {
        let cpu = t.binding.first().copied().unwrap_or(0);
        t.l1_bytes = sysfs_cache(cpu, 1);
        t.l2_bytes = sysfs_cache(cpu, 2);
        t.l3_bytes = sysfs_cache(cpu, 3);
    }
    t
}

/// Facts from hwloc, or `None` when the topology cannot be loaded.
fn from_hwloc() -> Option<Topology> {
    use hwloc2::{CpuBindFlags, ObjectType};
    let topo = hwloc2::Topology::new()?;
    let pu_set: BTreeSet<usize> = topo
        .objects_with_type(&ObjectType::PU)
        .ok()?
        .iter()
        .map(|o| o.os_index() as usize)
        .collect();
    if pu_set.is_empty() {
        return None;
    }
    let cores = topo
        .objects_with_type(&ObjectType::Core)
        .map(|v| v.len())
        .unwrap_or(0);
    // The binding, intersected with the known PUs (hwloc may report an
    // unbound process as an infinite set: iterate only as far as the last PU).
    let last_pu = pu_set.iter().next_back().copied().unwrap_or(0);
    let binding: Vec<usize> = topo
        .get_cpubind(CpuBindFlags::CPUBIND_PROCESS)
        .map(|set| {
            set.into_iter()
                .map(|i| i as usize)
                .take_while(|&i| i <= last_pu)
                .filter(|i| pu_set.contains(i))
                .collect()
        })
        .unwrap_or_default();
    let first = binding
        .first()
        .or_else(|| pu_set.iter().next())
        .copied()
        .unwrap_or(0);
    let cache = |ty: ObjectType| -> Option<u64> {
        let objs = topo.objects_with_type(&ty).ok()?;
        let obj = objs
            .iter()
            .find(|o| o.cpuset().is_some_and(|c| c.is_set(first as u32)))
            .or_else(|| objs.first())?;
        // Only cache objects have cache attributes (hwloc2 dereferences the
        // attribute pointer unchecked).
        if obj.object_type() != ty {
            return None;
        }
        obj.cache_attributes().map(|a| a.size()).filter(|&s| s > 0)
    };
    Some(Topology {
        host: String::new(),
        cores,
        pus: pu_set.len(),
        binding,
        l1_bytes: cache(ObjectType::L1Cache),
        l2_bytes: cache(ObjectType::L2Cache),
        l3_bytes: cache(ObjectType::L3Cache),
    })
}

/// The memory of this process's machine in bytes, as hwloc reports it: the
/// total memory of the topology's root object (the sum of the NUMA nodes'
/// memory this process may use; a topology restricted by a cpuset cgroup
/// counts only the allowed nodes). `None` when hwloc cannot load the
/// topology or reports no memory: no guess from other sources. It is not
/// a memory cgroup's or a batch system's limit (declare those with
/// `Balancer::set_memory_limit`).
///
/// Complexity: one hwloc topology load (a few ms).
pub fn machine_memory() -> Option<u64> {
    std::panic::catch_unwind(|| {
        let topo = hwloc2::Topology::new()?;
        Some(topo.object_at_root().total_memory())
    })
    .ok()
    .flatten()
    .filter(|&b| b > 0)
}

fn read_to_string(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn host_name() -> String {
    read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}

/// Parses a Linux CPU list such as `"0-3,8,10-11"` (ascending, deduplicated).
/// `None` on any malformed entry or an empty list.
pub(crate) fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut out = BTreeSet::new();
    for part in s.trim().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b || b - a > 1 << 16 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => {
                out.insert(part.parse().ok()?);
            }
        }
    }
    if out.is_empty() {
        None
    } else {
        Some(out.into_iter().collect())
    }
}

/// Parses a sysfs cache size such as `"48K"`, `"4096K"`, `"32M"`, `"512"`.
pub(crate) fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'K' | 'k') => (&s[..i], 1u64 << 10),
        (i, 'M' | 'm') => (&s[..i], 1 << 20),
        (i, 'G' | 'g') => (&s[..i], 1 << 30),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

fn proc_cpuinfo_pus() -> Option<usize> {
    let s = read_to_string("/proc/cpuinfo")?;
    let n = s.lines().filter(|l| l.starts_with("processor")).count();
    (n > 0).then_some(n)
}

fn proc_cpuinfo_cores() -> Option<usize> {
    let s = read_to_string("/proc/cpuinfo")?;
    let mut cores = BTreeSet::new();
    for block in s.split("\n\n") {
        let field = |name: &str| {
            block.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == name).then(|| v.trim().to_string())
            })
        };
        if let (Some(p), Some(c)) = (field("physical id"), field("core id")) {
            cores.insert((p, c));
        }
    }
    (!cores.is_empty()).then_some(cores.len())
}

/// Size of the level-`level` data or unified cache of `cpu`, from sysfs.
fn sysfs_cache(cpu: usize, level: u32) -> Option<u64> {
    let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
    let entries = std::fs::read_dir(dir).ok()?;
    for e in entries.flatten() {
        let p = e.path();
        let get = |f: &str| std::fs::read_to_string(p.join(f)).ok();
        let lvl = get("level").and_then(|s| s.trim().parse::<u32>().ok());
        let ty = get("type").map(|s| s.trim().to_string());
        if lvl == Some(level) && matches!(ty.as_deref(), Some("Data" | "Unified")) {
            return get("size").and_then(|s| parse_size(&s));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list(" 5 \n"), Some(vec![5]));
        assert_eq!(parse_cpu_list("3,1-2,2"), Some(vec![1, 2, 3]));
        for bad in ["", "a", "3-1", "1-", "0-99999999"] {
            assert_eq!(parse_cpu_list(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("48K"), Some(48 * 1024));
        assert_eq!(parse_size("32M\n"), Some(32 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("99999999999999999999G"), None);
    }

    #[test]
    fn machine_memory_agrees_with_proc_meminfo() {
        // Independent oracle: the kernel's MemTotal (kB). hwloc sums the
        // NUMA nodes' MemTotal (the nodes this process may use): at most
        // the machine's.
        let Some(total) = read_to_string("/proc/meminfo").and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map(|kb| kb * 1024)
        }) else {
            return;
        };
        let m = machine_memory().expect("hwloc reports the machine's memory");
        assert!(m <= total, "hwloc {m} > /proc/meminfo {total}");
        assert!(m > 0);
    }

    #[test]
    fn topology_is_sane_and_agrees_with_the_os() {
        let t = topology();
        assert!(!t.host.is_empty());
        assert!(t.pus >= 1 && t.cores >= 1 && t.cores <= t.pus);
        assert!(!t.binding.is_empty());
        assert!(t.binding.windows(2).all(|w| w[0] < w[1]));
        // Independent oracle: the kernel's affinity list of this process.
        if let Some(os) = read_to_string("/proc/self/status").and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .and_then(parse_cpu_list)
        }) {
            assert_eq!(t.binding, os);
        }
        // available_parallelism is the affinity count, lowered by a cgroup
        // CPU quota if there is one.
        let par = std::thread::available_parallelism().unwrap().get();
        assert!(par <= t.binding.len(), "{par} > {:?}", t.binding);
        if let (Some(a), Some(b)) = (t.l1_bytes, t.l2_bytes) {
            assert!(a >= 1024 && a <= b, "{a} {b}");
        }
        if let (Some(b), Some(c)) = (t.l2_bytes, t.l3_bytes) {
            assert!(b <= c);
        }
    }
}
