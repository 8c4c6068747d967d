//! The facts about the machine and the code that a benchmark result must carry: without
//! them a number cannot be compared with another.

use std::process::Command;

/// What ran the benchmark.
#[derive(Debug, Clone)]
pub struct MachineFacts {
    /// The processor's model name (`/proc/cpuinfo`), or "unknown".
    pub cpu: String,
    /// Logical cores (hardware threads) available to kivi.
    pub logical_cores: usize,
    /// Physical cores.
    pub physical_cores: usize,
    /// Installed memory in GiB (`/proc/meminfo`), 0 when unknown.
    pub memory_gib: u64,
    /// Operating system and kernel release.
    pub os: String,
    /// The git commit of the working directory, with " (modified)" when tracked files other
    /// than `results/` differ from it, or "unknown (not a git checkout)".
    pub commit: String,
    /// kivi's version.
    pub version: &'static str,
    /// When the sweep started, UTC, `YYYY-MM-DD HH:MM`.
    pub date: String,
}

impl MachineFacts {
    /// Collects the facts of this machine and working directory.
    pub fn collect() -> MachineFacts {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("model name"))
            .and_then(|rest| rest.split_once(':'))
            .map(|(_, name)| name.trim().to_string())
            .unwrap_or_else(|| "unknown".to_string());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let memory_kib: u64 = meminfo
            .lines()
            .find_map(|line| line.strip_prefix("MemTotal:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|kib| kib.parse().ok())
            .unwrap_or(0);
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|text| format!(" {}", text.trim()))
            .unwrap_or_default();
        MachineFacts {
            cpu,
            logical_cores: num_cpus::get(),
            physical_cores: num_cpus::get_physical(),
            memory_gib: (memory_kib + (1 << 19)) >> 20,
            os: format!("{}{release}", std::env::consts::OS),
            commit: commit(),
            version: env!("CARGO_PKG_VERSION"),
            date: utc_now(),
        }
    }

    /// The facts as Markdown list items.
    pub fn to_markdown(&self) -> String {
        format!(
            "- machine: {}, {} logical cores ({} physical), {} GiB, {}\n- commit: {} (kivi {})\n\
             - date: {} UTC\n",
            self.cpu,
            self.logical_cores,
            self.physical_cores,
            self.memory_gib,
            self.os,
            self.commit,
            self.version,
            self.date
        )
    }
}

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
}

fn commit() -> String {
    match git(&["rev-parse", "HEAD"]) {
        Some(head) => {
            // Result files are what sweeps write: they do not change what is measured.
            let modified = git(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ":/",
                ":(top,exclude)results",
            ])
            .is_some_and(|changes| !changes.is_empty());
            if modified {
                format!("{head} (modified)")
            } else {
                head
            }
        }
        None => "unknown (not a git checkout)".to_string(),
    }
}

/// The current UTC time as `YYYY-MM-DD HH:MM`, from the system clock (civil-from-days).
fn utc_now() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0);
    let (days, of_day) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        of_day / 3600,
        of_day % 3600 / 60
    )
}

/// Year, month and day of the `days`-th day after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * shifted_month + 2) / 5 + 1) as u32;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::civil_from_days;

    #[test]
    fn converts_days_to_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_779), (2026, 11, 22));
    }
}
