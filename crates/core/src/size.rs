//! Element counts as people write them: `1000003`, `1e6`, `2^20`, `64Mi`, `4K` — for
//! command lines, kernel argument specs and anything else that takes a size as text.

/// Parses one size; see the module doc for the accepted forms.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let s = text.trim();
    let bad =
        |why: &str| format!("invalid size '{text}': {why} (examples: 1000003, 1e6, 2^20, 64Mi)");
    if s.is_empty() {
        return Err(bad("empty"));
    }
    if let Some((base, exp)) = s.split_once('^') {
        let base: u32 = base
            .trim()
            .parse()
            .map_err(|_| bad("the base is not a whole number"))?;
        let exp: u32 = exp
            .trim()
            .parse()
            .map_err(|_| bad("the exponent is not a whole number"))?;
        return (base as usize)
            .checked_pow(exp)
            .ok_or_else(|| bad("too large"));
    }
    let suffixes: [(&str, u128); 8] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
        ("K", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
        ("T", 1_000_000_000_000),
    ];
    let (number, multiplier) = suffixes
        .iter()
        .find_map(|(suffix, m)| s.strip_suffix(suffix).map(|rest| (rest, *m)))
        .unwrap_or((s, 1));
    let value: u128 = if let Ok(v) = number.parse::<u128>() {
        v.checked_mul(multiplier).ok_or_else(|| bad("too large"))?
    } else {
        let v: f64 = number.parse().map_err(|_| bad("not a number"))?;
        let scaled = v * multiplier as f64;
        if !scaled.is_finite() || scaled < 0.0 || scaled.fract() != 0.0 {
            return Err(bad("not a whole, non-negative count"));
        }
        if scaled >= usize::MAX as f64 {
            return Err(bad("too large"));
        }
        scaled as u128
    };
    usize::try_from(value).map_err(|_| bad("too large"))
}

/// Parses a comma-separated list of sizes.
pub fn parse_size_list(text: &str) -> Result<Vec<usize>, String> {
    text.split(',').map(parse_size).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms() {
        assert_eq!(parse_size("1000003"), Ok(1_000_003));
        assert_eq!(parse_size("1e6"), Ok(1_000_000));
        assert_eq!(parse_size("2.5e3"), Ok(2_500));
        assert_eq!(parse_size("2^20"), Ok(1 << 20));
        assert_eq!(parse_size("64Mi"), Ok(64 << 20));
        assert_eq!(parse_size("4K"), Ok(4_000));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size_list("1,2^3,1Ki"), Ok(vec![1, 8, 1024]));
    }

    #[test]
    fn rejected_forms() {
        for bad in [
            "",
            "-5",
            "1.5",
            "1e-3",
            "2^x",
            "abc",
            "2^99",
            "99999999999999999999999Ti",
        ] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
