//! How the ranks of a multi-process run exchange their subtree roots: through NCCL when
//! every rank holds a GPU of its own and NCCL is here, otherwise through the rendezvous
//! itself. Either way each rank receives every root and joins them in tree order, so
//! the choice changes the transport, never the bits.
//!
//! The ranks first tell each other what they hold (one rendezvous round), so that all
//! of them take the same decision: NCCL needs one rank per GPU and libnccl on every
//! rank.

use std::io::Write;

use anyhow::bail;
#[cfg(feature = "cuda")]
use anyhow::Context;
use redlab::rendezvous::Group;
use redlab::{Device, Value};
use redlab_core::shard::ShardPlan;
use redlab_core::value_bytes::{self, VALUE_BYTES};
use serde_json::{json, Map, Value as JsonValue};

/// `--exchange`: which transport carries the roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(super) enum Exchange {
    /// NCCL where every rank has a GPU of its own with NCCL, else the rendezvous.
    Auto,
    /// NCCL, or an error saying why it cannot be used.
    Nccl,
    /// The rendezvous (TCP or the shared folder).
    Rendezvous,
}

/// What carried the roots, why, and the seconds the exchange itself took.
pub(super) struct Exchanged {
    pub parts: Vec<Vec<u8>>,
    pub transport: &'static str,
    pub why: String,
    pub seconds: f64,
    /// Through NCCL: seconds of a first, untimed-for-the-result all-gather of the same
    /// size, which waits for the slowest rank and makes NCCL's connections (it connects
    /// lazily, on a communicator's first collective), so `seconds` is the step itself.
    pub setup_seconds: Option<f64>,
}

impl Exchanged {
    /// The record's timing fields: joining the rendezvous, reducing, the exchange.
    pub fn time_fields(&self, joined: f64, reduced: f64, fields: &mut Map<String, JsonValue>) {
        fields.insert("join_s".into(), json!(joined));
        fields.insert("reduce_s".into(), json!(reduced));
        fields.insert("exchange".into(), json!(self.transport));
        fields.insert("exchange_why".into(), json!(self.why));
        fields.insert("exchange_s".into(), json!(self.seconds));
    }

    /// The report's time line: joining, reducing, the exchange and what carried it.
    pub fn time_line(&self, joined: f64, reduced: f64, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "  time      join {}, reduce {}, exchange {} (through {}: {})",
            super::run::seconds_text(joined),
            super::run::seconds_text(reduced),
            super::run::seconds_text(self.seconds),
            self.transport,
            self.why
        )
    }
}

/// Sends this rank's subtree `roots` of `plan` to every rank, closes the group, and
/// returns every rank's roots in plan order with what carried them. NCCL moves equal
/// sizes, so each rank's slot holds as many roots as the rank with the most.
pub(super) fn exchange_roots(
    mut group: Group,
    device: &Device,
    ranks: &super::ranks::Ranks,
    plan: &ShardPlan,
    roots: &[Value],
) -> anyhow::Result<(Vec<Value>, Exchanged)> {
    let sent: Vec<u8> = roots.iter().flat_map(value_bytes::encode).collect();
    let slot = (0..ranks.world)
        .map(|r| plan.subtrees_of(r).len())
        .max()
        .unwrap_or(0)
        * VALUE_BYTES;
    let exchanged = exchange(&mut group, device, ranks.exchange, &sent, slot)?;
    group.finish()?;
    let mut all = Vec::with_capacity(plan.subtrees.len());
    for part in &exchanged.parts {
        for bytes in part.chunks(VALUE_BYTES) {
            all.push(value_bytes::decode(bytes)?);
        }
    }
    if all.len() != plan.subtrees.len() {
        bail!(
            "the ranks sent {} subtree roots for {} subtrees: were they all started with the same input, --dtype and --world?",
            all.len(),
            plan.subtrees.len()
        );
    }
    Ok((all, exchanged))
}

/// This rank's description for the others: `cuda UUID nccl|-` or `host`.
fn identity(device: &Device) -> String {
    #[cfg(feature = "cuda")]
    if let Some(cuda) = device.cuda() {
        let nccl = if redlab_cuda::nccl::status().is_ok() {
            "nccl"
        } else {
            "-"
        };
        return match cuda.uuid() {
            Ok(uuid) => format!("cuda {uuid} {nccl}"),
            Err(_) => "host".into(),
        };
    }
    let _ = device;
    "host".into()
}

/// Whether NCCL can carry the exchange, from every rank's identity; `Err` says why not.
fn nccl_possible(identities: &[String]) -> Result<(), String> {
    let mut gpus = Vec::new();
    for (rank, id) in identities.iter().enumerate() {
        let words: Vec<&str> = id.split(' ').collect();
        match words.as_slice() {
            ["cuda", uuid, "nccl"] => {
                if gpus.contains(uuid) {
                    return Err(format!(
                        "rank {rank} shares its GPU with another rank (NCCL takes one rank per GPU)"
                    ));
                }
                gpus.push(*uuid);
            }
            ["cuda", _, _] => return Err(format!("rank {rank} has no NCCL library")),
            _ => return Err(format!("rank {rank} reduces on the host, not a CUDA GPU")),
        }
    }
    Ok(())
}

/// Sends `mine` (this rank's encoded roots) to every rank and returns every rank's, in
/// rank order. `slot` is the largest contribution any rank makes (NCCL's all-gather
/// moves equal sizes, so shorter ones are padded and cut back).
pub(super) fn exchange(
    group: &mut Group,
    device: &Device,
    how: Exchange,
    mine: &[u8],
    slot: usize,
) -> anyhow::Result<Exchanged> {
    let started = std::time::Instant::now();
    let identities: Vec<String> = group
        .all_gather(identity(device).as_bytes())?
        .into_iter()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    let nccl = match (how, nccl_possible(&identities)) {
        (Exchange::Rendezvous, _) => Err("--exchange rendezvous".to_string()),
        (_, Ok(())) => Ok(()),
        (Exchange::Nccl, Err(why)) => bail!("--exchange nccl: {why}"),
        (Exchange::Auto, Err(why)) => Err(why),
    };
    match nccl {
        Ok(()) => over_nccl(group, device, mine, slot),
        Err(why) => Ok(Exchanged {
            parts: group.all_gather(mine)?,
            transport: "rendezvous",
            why,
            seconds: started.elapsed().as_secs_f64(),
            setup_seconds: None,
        }),
    }
}

#[cfg(feature = "cuda")]
fn over_nccl(
    group: &mut Group,
    device: &Device,
    mine: &[u8],
    slot: usize,
) -> anyhow::Result<Exchanged> {
    let cuda = device.cuda().context("NCCL needs a CUDA device")?;
    // Rank 0 makes the id; the rendezvous carries it to the others.
    let id = if group.rank() == 0 {
        redlab_cuda::nccl::unique_id().map_err(|e| anyhow::anyhow!("{e}"))?
    } else {
        Vec::new()
    };
    let id = group.all_gather(&id)?.swap_remove(0);
    let comm = cuda
        .communicator(&id, group.rank(), group.world())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    // Each slot: the contribution's length, then the contribution, then padding.
    let mut padded = (mine.len() as u64).to_le_bytes().to_vec();
    padded.extend_from_slice(mine);
    padded.resize(8 + slot, 0);
    let (_, setup_seconds) = comm
        .all_gather(&padded)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let (all, seconds) = comm
        .all_gather(&padded)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let parts = all
        .chunks(8 + slot)
        .map(|c| {
            let len = u64::from_le_bytes(c[..8].try_into().expect("8 bytes")) as usize;
            c.get(8..8 + len)
                .map(<[u8]>::to_vec)
                .context("an NCCL slot longer than its room")
        })
        .collect::<anyhow::Result<_>>()?;
    Ok(Exchanged {
        parts,
        transport: "nccl",
        why: "every rank has a GPU of its own and NCCL".into(),
        seconds,
        setup_seconds: Some(setup_seconds),
    })
}

#[cfg(not(feature = "cuda"))]
fn over_nccl(_: &mut Group, _: &Device, _: &[u8], _: usize) -> anyhow::Result<Exchanged> {
    bail!("this build has no CUDA backend, so no NCCL")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nccl_needs_a_gpu_of_its_own_and_the_library_on_every_rank() {
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(nccl_possible(&ids(&["cuda aa nccl", "cuda bb nccl"])).is_ok());
        let shared = nccl_possible(&ids(&["cuda aa nccl", "cuda aa nccl"])).expect_err("shared");
        assert!(shared.contains("shares its GPU"), "{shared}");
        let missing = nccl_possible(&ids(&["cuda aa nccl", "cuda bb -"])).expect_err("missing");
        assert!(missing.contains("rank 1 has no NCCL"), "{missing}");
        let host = nccl_possible(&ids(&["host", "cuda bb nccl"])).expect_err("host");
        assert!(host.contains("rank 0 reduces on the host"), "{host}");
    }
}
