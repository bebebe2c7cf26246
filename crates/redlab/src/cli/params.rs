//! `--param NAME=VALUE` options: variant parameters as the bench and the analyzer take
//! them.

use anyhow::Context;

/// `NAME=VALUE` pairs of `--param`.
pub fn parse_params(specs: &[String]) -> anyhow::Result<Vec<(String, u32)>> {
    specs
        .iter()
        .map(|spec| {
            let (name, value) = spec
                .split_once('=')
                .with_context(|| format!("--param wants NAME=VALUE (got '{spec}')"))?;
            let value: u32 = value
                .trim()
                .parse()
                .with_context(|| format!("--param {name}: '{value}' is not a number"))?;
            Ok((name.trim().to_string(), value))
        })
        .collect()
}
