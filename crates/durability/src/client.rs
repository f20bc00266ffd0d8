//! The client end of a recorder connection, shared by `durability write`
//! (the writer's session) and `durability verify --from` (a fetch): connect
//! within a deadline, the authenticated handshake, and reading the
//! recorder's tagged answers.

use crate::error::{DurabilityError, RecorderProblem};
use crate::wire::{
    self, hex, never, write_all_by, Key, Limits, LineReader, Side, Tagger, PROTOCOL_VERSION,
};
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub(crate) fn connect(addr: &str) -> Result<TcpStream, DurabilityError> {
    use std::net::ToSocketAddrs as _;
    let fail = |problem| DurabilityError::recorder(addr, problem);
    let addrs: Vec<_> = addr
        .to_socket_addrs()
        .map_err(|e| fail(RecorderProblem::Connect(e)))?
        .collect();
    let mut last = RecorderProblem::NoAddress;
    for a in addrs {
        match TcpStream::connect_timeout(&a, Duration::from_secs(5)) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => last = RecorderProblem::Connect(e),
        }
    }
    Err(fail(last))
}

/// Read the recorder's greeting (its nonce), send the hello of `kind` and
/// `lines`, each with its tag. Returns the connection's tagger.
pub(crate) fn handshake(
    stream: &TcpStream,
    reader: &mut LineReader,
    addr: &str,
    key: &Key,
    limits: &Limits,
    kind: &str,
    lines: &[String],
) -> Result<Tagger, DurabilityError> {
    let refused = |problem| DurabilityError::recorder(addr, problem);
    let greeting = reader
        .read(stream, limits.line_deadline, limits.line_deadline, &never)
        .map_err(|e| refused(RecorderProblem::NoGreeting(e)))?;
    let theirs = match greeting.split(' ').collect::<Vec<_>>().as_slice() {
        ["tankbench-durability", v, "recorder", n] if *v == PROTOCOL_VERSION.to_string() => n
            .strip_prefix("nonce=")
            .and_then(wire::parse_nonce)
            .ok_or_else(|| refused(RecorderProblem::NoNonce))?,
        ["tankbench-durability", v, ..] => {
            return Err(refused(RecorderProblem::Protocol {
                theirs: v.chars().take(20).collect(),
            }))
        }
        _ => {
            return Err(refused(match greeting.strip_prefix("ERR ") {
                // A busy recorder refuses before any key is in play.
                Some(reason) => RecorderProblem::Refused {
                    reason: reason.chars().take(300).collect(),
                },
                None => RecorderProblem::NotARecorder,
            }));
        }
    };
    let ours = wire::nonce().map_err(DurabilityError::getrandom)?;
    let mut tagger = Tagger::new(key, &theirs, &ours, Side::Client);
    let mut out = String::new();
    tagger.seal(
        &format!(
            "tankbench-durability {PROTOCOL_VERSION} {kind} nonce={}",
            hex(&ours)
        ),
        &mut out,
    );
    for l in lines {
        tagger.seal(l, &mut out);
    }
    write_all_by(
        stream,
        out.as_bytes(),
        Instant::now() + limits.line_deadline,
        &never,
    )
    .map_err(|e| refused(RecorderProblem::Wire(e)))?;
    Ok(tagger)
}

/// A line from the recorder: its payload when its tag verifies; its
/// refusal as an error (an unauthenticated `ERR` line is taken as a refusal
/// too: the connection is over either way).
pub(crate) fn answer(tagger: &mut Tagger, line: &str) -> Result<String, RecorderProblem> {
    match tagger.open(line) {
        Ok(p) => match p.strip_prefix("ERR ") {
            Some(reason) => Err(RecorderProblem::Refused {
                reason: reason.to_string(),
            }),
            None => Ok(p.to_string()),
        },
        Err(e) => match line.strip_prefix("ERR ") {
            Some(reason) => Err(RecorderProblem::Refused {
                reason: reason.chars().take(300).collect(),
            }),
            None => Err(RecorderProblem::Unauthenticated(e)),
        },
    }
}
