//! A cache's size limit, read from an environment variable: a size (`4G`, `500M`, `1.5G`,
//! `750k`, bytes without a unit; the units are binary, `KB` and `KiB` alike) or `off` for
//! none. A value that is not one of these leaves the default in force and is said, by
//! [`SizeLimit::problem`], wherever the caller tells the user things.

/// One limit: the variable that sets it and its value when the variable does not.
#[derive(Debug, Clone, Copy)]
pub struct SizeLimit {
    /// The environment variable.
    pub var: &'static str,
    /// The limit in bytes without it.
    pub default: u64,
}

impl SizeLimit {
    /// The limit in bytes that `value` sets: `None` for no limit, an error naming the
    /// variable for a value that is not a size.
    pub fn parse(&self, value: &str) -> Result<Option<u64>, String> {
        let var = self.var;
        let v = value.trim();
        if v.eq_ignore_ascii_case("off") || v.eq_ignore_ascii_case("none") {
            return Ok(None);
        }
        let split = v
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(v.len());
        let (number, unit) = v.split_at(split);
        let n: f64 = number
            .parse()
            .map_err(|_| format!("{var}={value:?}: not a size such as 4G, 500M or off"))?;
        let unit = unit.trim().to_ascii_lowercase();
        let unit = unit
            .strip_suffix("ib")
            .or_else(|| unit.strip_suffix('b'))
            .unwrap_or(&unit);
        let scale: u64 = match unit {
            "" => 1,
            "k" => 1 << 10,
            "m" => 1 << 20,
            "g" => 1 << 30,
            "t" => 1 << 40,
            _ => {
                return Err(format!(
                    "{var}={value:?}: the unit is not one of k, M, G, T"
                ));
            }
        };
        let bytes = n * scale as f64;
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(format!("{var}={value:?}: too large"));
        }
        Ok(Some(bytes as u64))
    }

    /// The limit the environment sets: the variable's when it is a size or `off`, else the
    /// default (an unreadable value is said by [`SizeLimit::problem`]).
    pub fn from_env(&self) -> Option<u64> {
        match std::env::var(self.var) {
            Ok(v) => self.parse(&v).unwrap_or(Some(self.default)),
            Err(_) => Some(self.default),
        }
    }

    /// Why the variable is not read, when it is set to something that is not a size.
    pub fn problem(&self) -> Option<String> {
        self.problem_of(&std::env::var(self.var).ok()?)
    }

    /// Why `value`, the variable's, is not read, when it is not a size.
    pub fn problem_of(&self, value: &str) -> Option<String> {
        self.parse(value)
            .err()
            .map(|e| format!("{e}; the default, {}, is used", show(self.default)))
    }
}

/// A size as the variables take it: `4G`, `512M`, or bytes.
fn show(bytes: u64) -> String {
    ["T", "G", "M", "k"]
        .iter()
        .zip([40, 30, 20, 10])
        .find(|&(_, shift)| bytes >= 1 << shift && bytes.is_multiple_of(1 << shift))
        .map_or(bytes.to_string(), |(unit, shift)| {
            format!("{}{unit}", bytes >> shift)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: SizeLimit = SizeLimit {
        var: "X_LIMIT",
        default: 4 << 30,
    };

    #[test]
    fn sizes_are_read_with_binary_units() {
        assert_eq!(L.parse("4G"), Ok(Some(4 << 30)));
        assert_eq!(L.parse(" 500m "), Ok(Some(500 << 20)));
        assert_eq!(L.parse("1.5GiB"), Ok(Some(3 << 29)));
        assert_eq!(L.parse("750k"), Ok(Some(750 << 10)));
        assert_eq!(L.parse("1000"), Ok(Some(1000)));
        assert_eq!(L.parse("1000b"), Ok(Some(1000)));
        assert_eq!(L.parse("2GB"), Ok(Some(2 << 30)));
        assert_eq!(L.parse("0"), Ok(Some(0)));
        assert_eq!(L.parse("off"), Ok(None));
        assert!(L.parse("4X").unwrap_err().contains("unit"));
        assert!(L.parse("lots").unwrap_err().contains("not a size"));
        assert!(L.parse("").is_err());
        assert!(L.parse("1e30T").is_err());
        assert!(L.parse("4X").unwrap_err().starts_with("X_LIMIT=\"4X\""));
    }

    #[test]
    fn the_default_is_shown_in_the_unit_it_was_given_in() {
        assert_eq!(show(4 << 30), "4G");
        assert_eq!(show(512 << 20), "512M");
        assert_eq!(show(3 << 29), "1536M");
        assert_eq!(show(1000), "1000");
        assert_eq!(show(0), "0");
    }
}
