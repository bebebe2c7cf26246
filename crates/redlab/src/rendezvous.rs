//! How the processes of one multi-process reduction find each other and exchange their
//! partial results: one process per device (or per host), each started with its rank
//! and the world size, as distributed jobs are launched.
//!
//! - `tcp://HOST:PORT`: rank 0 listens there; every other rank connects (retrying until
//!   the timeout, since launchers start processes in any order) and introduces itself.
//!   Rank 0 checks the world size and that every rank comes once. This reaches across
//!   hosts: start rank 0 on the host named in the address.
//! - `file:PATH`: a folder that rank 0 creates (it must not exist, so a stale one from
//!   an earlier run is never read); every rank writes its contribution to each exchange
//!   there and reads the others'. It needs a file system all ranks share; rank 0
//!   removes the folder at the end.
//!
//! The only collective is [`Group::all_gather`]: every rank's bytes, in rank order, on
//! every rank. A reduction gathers its subtree roots with it (a few bytes per rank) and
//! joins them in the canonical tree order, so the result does not depend on the world
//! size; a bootstrap blob (an NCCL unique id) is a gather where only rank 0 has bytes.

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::thread::sleep;
use std::time::{Duration, Instant};

/// What goes wrong while ranks meet or exchange.
#[derive(Debug, thiserror::Error)]
pub enum RendezvousError {
    /// The address or the rank/world pair is not usable.
    #[error("rendezvous: {0}")]
    Usage(String),
    /// The other ranks did not arrive, or left, in time.
    #[error("rendezvous {address}: {why}")]
    Failed {
        /// The address, as given.
        address: String,
        /// What happened.
        why: String,
    },
}

/// Where the ranks meet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// `tcp://HOST:PORT`: rank 0 listens on it.
    Tcp(String),
    /// `file:PATH`: a folder that rank 0 creates.
    Folder(PathBuf),
}

impl FromStr for Address {
    type Err = RendezvousError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(rest) = s.strip_prefix("tcp://") {
            if rest
                .rsplit_once(':')
                .is_none_or(|(h, p)| h.is_empty() || p.parse::<u16>().is_err())
            {
                return Err(RendezvousError::Usage(format!(
                    "'{s}' needs a host and a port, as tcp://HOST:PORT"
                )));
            }
            return Ok(Address::Tcp(rest.to_string()));
        }
        if let Some(rest) = s.strip_prefix("file:") {
            let path = rest.strip_prefix("//").unwrap_or(rest);
            if path.is_empty() {
                return Err(RendezvousError::Usage(format!("'{s}' names no folder")));
            }
            return Ok(Address::Folder(PathBuf::from(path)));
        }
        Err(RendezvousError::Usage(format!(
            "'{s}' is neither tcp://HOST:PORT nor file:PATH"
        )))
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Tcp(a) => write!(f, "tcp://{a}"),
            Address::Folder(p) => write!(f, "file:{}", p.display()),
        }
    }
}

/// Introduces a connecting rank: a tag, then its rank and the world size it was given.
const HELLO: &[u8; 8] = b"redlab1\0";
/// Largest message a rank accepts (a gather of roots is a few bytes per rank).
const MAX_MESSAGE: u64 = 1 << 30;

/// The ranks of one job, joined.
#[derive(Debug)]
pub struct Group {
    rank: usize,
    world: usize,
    address: String,
    timeout: Duration,
    link: Link,
    round: u64,
}

#[derive(Debug)]
enum Link {
    Alone,
    /// Rank 0's connections to ranks 1, 2, … in order.
    Root(Vec<TcpStream>),
    Member(TcpStream),
    Folder(PathBuf),
}

impl Group {
    /// Joins the group at `address` as `rank` of `world`, waiting up to `timeout` for the
    /// others. A world of one needs no partner and touches nothing.
    pub fn join(
        address: &Address,
        rank: usize,
        world: usize,
        timeout: Duration,
    ) -> Result<Group, RendezvousError> {
        if world == 0 || rank >= world {
            return Err(RendezvousError::Usage(format!(
                "rank {rank} is not one of the {world} ranks 0..{world}"
            )));
        }
        let mut group = Group {
            rank,
            world,
            address: address.to_string(),
            timeout,
            link: Link::Alone,
            round: 0,
        };
        if world == 1 {
            return Ok(group);
        }
        group.link = match address {
            Address::Tcp(at) => group.join_tcp(at)?,
            Address::Folder(path) => group.join_folder(path)?,
        };
        Ok(group)
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn world(&self) -> usize {
        self.world
    }

    fn failed(&self, why: impl std::fmt::Display) -> RendezvousError {
        RendezvousError::Failed {
            address: self.address.clone(),
            why: why.to_string(),
        }
    }

    fn join_tcp(&self, at: &str) -> Result<Link, RendezvousError> {
        let deadline = Instant::now() + self.timeout;
        if self.rank == 0 {
            let listener = TcpListener::bind(at)
                .map_err(|e| self.failed(format!("rank 0 cannot listen there: {e}")))?;
            listener.set_nonblocking(true).map_err(|e| self.failed(e))?;
            let mut members: Vec<Option<TcpStream>> = (1..self.world).map(|_| None).collect();
            while members.iter().any(Option::is_none) {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        stream.set_nonblocking(false).map_err(|e| self.failed(e))?;
                        self.set_timeouts(&stream)?;
                        let hello = read_message(&mut stream).map_err(|e| self.failed(e))?;
                        let verdict = self.check_hello(&hello, &members);
                        let reply = match &verdict {
                            Ok(_) => b"ok".to_vec(),
                            Err(why) => why.as_bytes().to_vec(),
                        };
                        write_message(&mut stream, &reply).map_err(|e| self.failed(e))?;
                        match verdict {
                            Ok(r) => members[r - 1] = Some(stream),
                            Err(why) => return Err(self.failed(why)),
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        if Instant::now() > deadline {
                            let missing: Vec<String> = members
                                .iter()
                                .enumerate()
                                .filter(|(_, m)| m.is_none())
                                .map(|(i, _)| (i + 1).to_string())
                                .collect();
                            return Err(self.failed(format!(
                                "rank{} {} did not arrive within {:?}",
                                if missing.len() == 1 { "" } else { "s" },
                                missing.join(", "),
                                self.timeout
                            )));
                        }
                        sleep(Duration::from_millis(5));
                    }
                    Err(e) => return Err(self.failed(e)),
                }
            }
            Ok(Link::Root(members.into_iter().flatten().collect()))
        } else {
            let mut stream = loop {
                let tried = at
                    .to_socket_addrs()
                    .map_err(|e| self.failed(format!("cannot resolve the address: {e}")))?
                    .find_map(|a| TcpStream::connect_timeout(&a, Duration::from_millis(500)).ok());
                match tried {
                    Some(s) => break s,
                    None if Instant::now() > deadline => {
                        return Err(
                            self.failed(format!("rank 0 did not answer within {:?}", self.timeout))
                        )
                    }
                    None => sleep(Duration::from_millis(20)),
                }
            };
            self.set_timeouts(&stream)?;
            let mut hello = HELLO.to_vec();
            hello.extend_from_slice(&(self.rank as u64).to_le_bytes());
            hello.extend_from_slice(&(self.world as u64).to_le_bytes());
            write_message(&mut stream, &hello).map_err(|e| self.failed(e))?;
            let reply = read_message(&mut stream).map_err(|e| self.failed(e))?;
            if reply != b"ok" {
                return Err(self.failed(format!(
                    "rank 0 refused rank {}: {}",
                    self.rank,
                    String::from_utf8_lossy(&reply)
                )));
            }
            Ok(Link::Member(stream))
        }
    }

    /// The rank a hello introduces, if it fits this group.
    fn check_hello(&self, hello: &[u8], members: &[Option<TcpStream>]) -> Result<usize, String> {
        if hello.len() != 24 || &hello[..8] != HELLO {
            return Err("a connection that is not a redlab rank".into());
        }
        let rank = u64::from_le_bytes(hello[8..16].try_into().expect("8 bytes")) as usize;
        let world = u64::from_le_bytes(hello[16..24].try_into().expect("8 bytes")) as usize;
        if world != self.world {
            return Err(format!(
                "rank {rank} was started with a world of {world}, rank 0 with {}",
                self.world
            ));
        }
        if rank == 0 || rank >= self.world {
            return Err(format!("rank {rank} is not one of 1..{}", self.world));
        }
        if members[rank - 1].is_some() {
            return Err(format!("rank {rank} arrived twice"));
        }
        Ok(rank)
    }

    fn set_timeouts(&self, stream: &TcpStream) -> Result<(), RendezvousError> {
        let t = Some(self.timeout.max(Duration::from_millis(1)));
        stream.set_read_timeout(t).map_err(|e| self.failed(e))?;
        stream.set_write_timeout(t).map_err(|e| self.failed(e))?;
        stream.set_nodelay(true).map_err(|e| self.failed(e))
    }

    fn join_folder(&self, path: &Path) -> Result<Link, RendezvousError> {
        if self.rank == 0 {
            fs::create_dir(path).map_err(|e| {
                self.failed(format!(
                    "rank 0 cannot create the folder ({e}); it must not exist yet (a folder left by an earlier run is never reused: remove it)"
                ))
            })?;
        } else {
            let deadline = Instant::now() + self.timeout;
            while !path.is_dir() {
                if Instant::now() > deadline {
                    return Err(self.failed(format!(
                        "rank 0 did not create the folder within {:?}",
                        self.timeout
                    )));
                }
                sleep(Duration::from_millis(10));
            }
        }
        Ok(Link::Folder(path.to_path_buf()))
    }

    /// Every rank's `mine`, in rank order, on every rank.
    pub fn all_gather(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>, RendezvousError> {
        self.round += 1;
        let result = match &mut self.link {
            Link::Alone => Ok(vec![mine.to_vec()]),
            Link::Root(members) => (|| {
                let mut all = vec![mine.to_vec()];
                for m in members.iter_mut() {
                    all.push(read_message(m)?);
                }
                let mut packed = Vec::new();
                for part in &all {
                    packed.extend_from_slice(&(part.len() as u64).to_le_bytes());
                    packed.extend_from_slice(part);
                }
                for m in members.iter_mut() {
                    write_message(m, &packed)?;
                }
                Ok(all)
            })(),
            Link::Member(root) => (|| {
                write_message(root, mine)?;
                unpack(&read_message(root)?, self.world)
            })(),
            Link::Folder(path) => {
                let path = path.clone();
                return self.gather_folder(&path, mine);
            }
        };
        result.map_err(|e: std::io::Error| self.failed(e))
    }

    fn gather_folder(&self, path: &Path, mine: &[u8]) -> Result<Vec<Vec<u8>>, RendezvousError> {
        let name = |rank: usize| path.join(format!("round{}.rank{rank}", self.round));
        // Written under another name, then renamed: a reader never sees half a file.
        let partial = path.join(format!("round{}.rank{}.partial", self.round, self.rank));
        fs::write(&partial, mine).map_err(|e| self.failed(e))?;
        fs::rename(&partial, name(self.rank)).map_err(|e| self.failed(e))?;
        let deadline = Instant::now() + self.timeout;
        let mut all = Vec::with_capacity(self.world);
        for r in 0..self.world {
            loop {
                match fs::read(name(r)) {
                    Ok(bytes) => break all.push(bytes),
                    Err(_) if Instant::now() <= deadline => sleep(Duration::from_millis(5)),
                    Err(e) => {
                        return Err(self.failed(format!(
                            "rank {r}'s part of exchange {} did not arrive within {:?}: {e}",
                            self.round, self.timeout
                        )))
                    }
                }
            }
        }
        Ok(all)
    }

    /// Ends the group: with a folder, every other rank says it is done reading, and rank
    /// 0 waits for all of them before it removes the folder.
    pub fn finish(self) -> Result<(), RendezvousError> {
        let Link::Folder(path) = &self.link else {
            return Ok(());
        };
        let done = |rank: usize| path.join(format!("done.rank{rank}"));
        if self.rank != 0 {
            return fs::write(done(self.rank), b"").map_err(|e| self.failed(e));
        }
        let deadline = Instant::now() + self.timeout;
        for r in 1..self.world {
            while !done(r).exists() {
                if Instant::now() > deadline {
                    return Err(self.failed(format!(
                        "rank {r} did not finish within {:?}; the folder is left in place",
                        self.timeout
                    )));
                }
                sleep(Duration::from_millis(5));
            }
        }
        fs::remove_dir_all(path).map_err(|e| self.failed(e))
    }
}

fn write_message(stream: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    stream.write_all(&(bytes.len() as u64).to_le_bytes())?;
    stream.write_all(bytes)?;
    stream.flush()
}

fn read_message(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 8];
    stream.read_exact(&mut len)?;
    let len = u64::from_le_bytes(len);
    if len > MAX_MESSAGE {
        return Err(std::io::Error::other(format!(
            "a message of {len} bytes is more than a rank sends"
        )));
    }
    let mut bytes = vec![0u8; len as usize];
    stream.read_exact(&mut bytes)?;
    Ok(bytes)
}

fn unpack(packed: &[u8], world: usize) -> std::io::Result<Vec<Vec<u8>>> {
    let mut all = Vec::with_capacity(world);
    let mut at = 0;
    while at < packed.len() {
        let len = packed
            .get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
            .ok_or_else(|| std::io::Error::other("a truncated exchange"))?;
        let part = packed
            .get(at + 8..at + 8 + len)
            .ok_or_else(|| std::io::Error::other("a truncated exchange"))?;
        all.push(part.to_vec());
        at += 8 + len;
    }
    if all.len() != world {
        return Err(std::io::Error::other(format!(
            "an exchange with {} parts for {world} ranks",
            all.len()
        )));
    }
    Ok(all)
}

/// A port on this host for a rank 0 that is about to be started to listen on: free now,
/// never given before by this process, and below the system's ephemeral range. A port
/// found by binding port 0 lies in that range, and between the check and rank 0's own
/// `bind` the system may hand it to some other outgoing connection as its source port;
/// rank 0 then fails with "Address already in use". Ports below the range are only taken
/// by explicit binds. Meant for launching ranks on one machine (tests, scripts). `None`
/// when every port below the range is taken.
pub fn local_listening_port() -> Option<u16> {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32768);
    let low = ephemeral_low.saturating_sub(12000).max(1024);
    let span = ephemeral_low.saturating_sub(low).max(1);
    // Separate processes (one per test under nextest) start at different places.
    let start = std::process::id().wrapping_mul(7919) % span;
    (0..span)
        .map(|step| (low + (start + step * 37) % span) as u16)
        .find(|port| !given.contains(port) && TcpListener::bind(("127.0.0.1", *port)).is_ok())
        .inspect(|port| given.push(*port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gather_in_threads(address: Address, world: usize) -> Vec<Vec<Vec<u8>>> {
        let handles: Vec<_> = (0..world)
            .map(|rank| {
                let address = address.clone();
                std::thread::spawn(move || {
                    let mut g =
                        Group::join(&address, rank, world, Duration::from_secs(20)).expect("joins");
                    let first = g.all_gather(&[rank as u8; 3]).expect("gathers");
                    let second = g
                        .all_gather(if rank == 0 { b"id" } else { b"" })
                        .expect("gathers");
                    g.finish().expect("finishes");
                    assert_eq!(second[0], b"id");
                    first
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank"))
            .collect()
    }

    #[test]
    fn every_rank_gets_every_part_in_rank_order() {
        for world in [1, 2, 5] {
            let tcp = Address::Tcp(format!(
                "127.0.0.1:{}",
                local_listening_port().expect("a free port")
            ));
            let dir =
                std::env::temp_dir().join(format!("redlab-rv-{}-{world}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            for address in [tcp, Address::Folder(dir.clone())] {
                for seen in gather_in_threads(address.clone(), world) {
                    let want: Vec<Vec<u8>> = (0..world).map(|r| vec![r as u8; 3]).collect();
                    assert_eq!(seen, want, "{address}");
                }
            }
            assert!(!dir.exists(), "rank 0 removes the folder");
        }
    }

    #[test]
    fn bad_addresses_and_ranks_are_refused() {
        for bad in ["tcp://nohost", "tcp://:1", "udp://x:1", "file:", "x"] {
            assert!(bad.parse::<Address>().is_err(), "{bad}");
        }
        let a = Address::Tcp(format!(
            "127.0.0.1:{}",
            local_listening_port().expect("a free port")
        ));
        assert!(Group::join(&a, 3, 3, Duration::from_millis(10)).is_err());
        assert!(Group::join(&a, 0, 0, Duration::from_millis(10)).is_err());
        // Nobody listens: a member gives up at the timeout with a clear reason.
        let e = Group::join(&a, 1, 2, Duration::from_millis(200)).expect_err("no rank 0");
        assert!(e.to_string().contains("did not answer"), "{e}");
        // An existing folder is never reused.
        let dir = std::env::temp_dir().join(format!("redlab-rv-stale-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("folder");
        let e = Group::join(
            &Address::Folder(dir.clone()),
            0,
            2,
            Duration::from_millis(10),
        )
        .expect_err("stale folder");
        assert!(e.to_string().contains("must not exist"), "{e}");
        fs::remove_dir_all(&dir).expect("cleanup");
    }

    #[test]
    fn mismatched_worlds_are_named() {
        let a = Address::Tcp(format!(
            "127.0.0.1:{}",
            local_listening_port().expect("a free port")
        ));
        let root = {
            let a = a.clone();
            std::thread::spawn(move || Group::join(&a, 0, 2, Duration::from_secs(10)))
        };
        let member = Group::join(&a, 1, 3, Duration::from_secs(10));
        let root = root.join().expect("rank 0");
        assert!(root
            .expect_err("refused")
            .to_string()
            .contains("world of 3"));
        assert!(member.expect_err("refused").to_string().contains("refused"));
    }
}
