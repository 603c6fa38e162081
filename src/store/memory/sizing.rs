//! Default budgets of the embedded store, sized to the machine: the store
//! may use an eighth of the memory this process can have (the cgroup limit,
//! else the machine's), between 64 MiB and 4 GiB, and one principal an
//! eighth of that, at least 4 MiB. docs/scaling.md has the arithmetic of
//! how many runs that keeps.

const MIB: u64 = 1024 * 1024;

/// The store's total budget and one principal's share, for `memory` bytes.
pub(crate) fn budgets_for(memory: u64) -> (u64, u64) {
    let total = (memory / 8).clamp(64 * MIB, 4096 * MIB);
    let principal = (total / 8).max(4 * MIB);
    (total, principal)
}

/// The memory this process may use: the cgroup v2 or v1 limit when one is
/// set, else `MemTotal`; 1 GiB when neither can be read.
pub(crate) fn available_memory() -> u64 {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text))
        .unwrap_or(1024 * MIB);
    let limit = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .filter_map(|path| std::fs::read_to_string(path).ok())
    .find_map(|text| text.trim().parse::<u64>().ok());
    limit.map_or(machine, |l| l.min(machine))
}

/// `MemTotal` of /proc/meminfo, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_follow_the_machine_within_bounds() {
        assert_eq!(budgets_for(256 * MIB), (64 * MIB, 8 * MIB));
        assert_eq!(budgets_for(24 * 1024 * MIB), (3072 * MIB, 384 * MIB));
        assert_eq!(budgets_for(1024 * 1024 * MIB), (4096 * MIB, 512 * MIB));
    }

    #[test]
    fn mem_total_is_read_in_bytes() {
        let text = "MemTotal:       24576000 kB\nMemFree: 1 kB\n";
        assert_eq!(mem_total(text), Some(24_576_000 * 1024));
        assert_eq!(mem_total("nothing"), None);
        assert!(available_memory() > 0);
    }
}
