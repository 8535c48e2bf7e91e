//! The scripted loopback server shared by the tower and reqwest tests.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use stagger::clock::{SystemClock, WallClock};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};

/// What the server saw: each attempt, in order, as `METHOD /path [body]`.
#[derive(Default)]
struct Seen {
    log: Vec<String>,
    counts: HashMap<String, u32>,
}

#[derive(Clone)]
pub(crate) struct Server {
    /// The address it listens on.
    pub(crate) addr: SocketAddr,
    seen: Arc<Mutex<Seen>>,
}

impl Server {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn log(&self) -> Vec<String> {
        self.seen.lock().unwrap().log.clone()
    }

    pub(crate) fn count(&self, path: &str) -> u32 {
        self.seen
            .lock()
            .unwrap()
            .counts
            .get(path)
            .copied()
            .unwrap_or(0)
    }

    /// Waits (up to 2 s) for the server to log the second `/slow` attempt as cancelled, and
    /// checks that nothing else reached it: the client dropped the attempt in flight at its
    /// deadline and made no third one.
    pub(crate) async fn expect_cancelled_slow_attempt(&self) {
        let dropped = async {
            while self.log().len() < 3 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(2), dropped)
            .await
            .expect("the server saw the attempt cancelled");
        assert_eq!(self.log(), ["GET /slow", "GET /slow", "GET /slow dropped"]);
    }

    /// Logs an attempt at `path` and returns its number, from 1.
    fn attempt(&self, path: &str, entry: String) -> u32 {
        let mut seen = self.seen.lock().unwrap();
        seen.log.push(entry);
        let n = seen.counts.entry(path.to_owned()).or_default();
        *n += 1;
        *n
    }
}

/// Starts the scripted server on 127.0.0.1, on a port the system picks.
///
/// - `/busy`: 503 with `Retry-After: 1`, then 200.
/// - `/throttled`: 429 with `Retry-After` an HTTP-date 1 s after its own `Date`, then 200.
/// - `/slow`: 503, then a response that takes 5 s (logging `dropped` if the server sees the
///   attempt cancelled).
/// - `/reset...`: the first connection is reset (RST) once the request is read, without a
///   response; then 200.
/// - `/orders...`: 503, then 201. Bodies are logged.
/// - `/always503`: 503.
/// - `/stall...`: every response takes 5 s.
/// - `/trickle`: 200 at once, then a body of 30 chunks, one every 100 ms (3 s in all).
pub(crate) async fn start_server() -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = Server {
        addr: listener.local_addr().unwrap(),
        seen: Arc::default(),
    };
    let accepting = server.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let server = accepting.clone();
            tokio::spawn(async move {
                let Some(stream) = maybe_reset(stream, &server).await else {
                    return;
                };
                let handler = server.clone();
                let service = service_fn(move |request| respond(handler.clone(), request));
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    server
}

/// Resets the connection if its first request is the first one to a `/reset` path: reads the
/// request head, then closes with `SO_LINGER` 0, which sends a RST and no response.
async fn maybe_reset(mut stream: TcpStream, server: &Server) -> Option<TcpStream> {
    let mut buf = [0u8; 2048];
    let head = loop {
        let n = stream.peek(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        if let Some(end) = buf[..n].windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        if n == buf.len() {
            return Some(stream);
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    };
    let line = String::from_utf8_lossy(&buf[..head])
        .lines()
        .next()?
        .to_owned();
    let mut words = line.split(' ');
    let (method, path) = (words.next()?.to_owned(), words.next()?.to_owned());
    if !path.starts_with("/reset") || server.count(&path) > 0 {
        return Some(stream);
    }
    server.attempt(&path, format!("{method} {path} reset"));
    let mut consumed = vec![0u8; head];
    stream.read_exact(&mut consumed).await.ok()?;
    stream.set_zero_linger().ok()?;
    drop(stream);
    None
}

/// Logs `dropped` if the response is cancelled before it is ready.
struct DropLog {
    server: Server,
    entry: Option<String>,
}

impl Drop for DropLog {
    fn drop(&mut self) {
        if let Some(entry) = self.entry.take() {
            self.server.seen.lock().unwrap().log.push(entry);
        }
    }
}

async fn respond(
    server: Server,
    request: Request<Incoming>,
) -> Result<Response<BoxBody<Bytes, Infallible>>, Infallible> {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let entry = if body.is_empty() {
        format!("{} {path}", parts.method)
    } else {
        format!("{} {path} {}", parts.method, String::from_utf8_lossy(&body))
    };
    let n = server.attempt(&path, entry);
    let response = |status: u16| Response::builder().status(status);
    let response = match (path.as_str(), n) {
        ("/busy", 1) => response(503).header("retry-after", "1"),
        ("/throttled", 1) => {
            let now = SystemClock.now();
            response(429)
                .header("date", http_date(now))
                .header("retry-after", http_date(now + Duration::from_secs(1)))
        }
        ("/slow", 1) => response(503),
        ("/slow", _) => {
            let mut guard = DropLog {
                server: server.clone(),
                entry: Some(format!("{} {path} dropped", parts.method)),
            };
            tokio::time::sleep(Duration::from_secs(5)).await;
            guard.entry = None;
            response(200)
        }
        (p, 1) if p.starts_with("/orders") => response(503),
        (p, _) if p.starts_with("/orders") => response(201),
        ("/always503", _) => response(503),
        (p, _) if p.starts_with("/stall") => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            response(200)
        }
        ("/trickle", _) => return Ok(response(200).body(trickle()).unwrap()),
        _ => response(200),
    };
    Ok(response
        .body(Full::new(Bytes::from_static(b"body")).boxed())
        .unwrap())
}

/// A body that takes 3 s to arrive: 30 chunks of 10 bytes, one every 100 ms.
fn trickle() -> BoxBody<Bytes, Infallible> {
    let chunks = futures_util::stream::unfold(0u32, |sent| async move {
        if sent == 30 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        Some((Ok(Frame::data(Bytes::from_static(b"0123456789"))), sent + 1))
    });
    StreamBody::new(chunks).boxed()
}

/// `t` as an IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`, truncated to the second.
pub(crate) fn http_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).unwrap().as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    // Civil from days (Howard Hinnant's algorithm), for dates after 1970.
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{weekday}, {day:02} {} {year} {:02}:{:02}:{:02} GMT",
        months[(month - 1) as usize],
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[test]
fn http_date_formats_rfc_9110_examples() {
    let t = UNIX_EPOCH + Duration::from_secs(784_111_777);
    assert_eq!(http_date(t), "Sun, 06 Nov 1994 08:49:37 GMT");
    let t = UNIX_EPOCH + Duration::from_secs(1_445_412_480);
    assert_eq!(http_date(t), "Wed, 21 Oct 2015 07:28:00 GMT");
}
