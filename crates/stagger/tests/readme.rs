//! The README's first example keeps every promise its text makes, run exactly as the README
//! shows it against a loopback server: a 429 with `Retry-After: 1` is retried no sooner than a
//! second later, a status that is not worth retrying ends the call at once, and the body of
//! the accepted response comes back.
//!
//! The example is compiled from `readme/first_example.rs`, and
//! [`the_readme_shows_the_example_this_test_runs`] holds that file to the README's first Rust
//! block, byte for byte: an edit to either without the other fails here. (A doc test cannot
//! point the example's `main` at a loopback server without lines the README would show.)

#![cfg(all(feature = "tokio", feature = "http"))]

use std::time::Duration;

use stagger::clock::{Clock, MonotonicClock, Timestamp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The README's first example. Its `main` is compiled but not run: it calls
/// `http://localhost:8080/`, and these tests call `get` with the address of their own server.
#[allow(
    dead_code,                    // `main`, which the tests do not call
    clippy::print_stdout,         // `main` prints what it got, as an example does
    clippy::disallowed_methods    // a reader's code reads the wall clock, as it should
)]
mod first_example {
    include!("readme/first_example.rs");

    /// The example's `get`, for the tests outside this module.
    pub(super) async fn call_get(url: &str) -> Result<String, Box<dyn std::error::Error>> {
        get(url).await
    }
}

const README: &str = include_str!("../../../README.md");
const FIRST_EXAMPLE: &str = include_str!("readme/first_example.rs");

/// The text of the first fenced block whose info string starts with `rust`, if any.
fn first_rust_block(markdown: &str) -> Option<&str> {
    let mut lines = markdown.split_inclusive('\n');
    let mut offset = 0;
    for line in lines.by_ref() {
        offset += line.len();
        let fence = line.trim_end();
        if fence.starts_with("```rust") {
            let rest = &markdown[offset..];
            let end = rest.find("\n```").map(|i| i + 1)?;
            return Some(&rest[..end]);
        }
    }
    None
}

#[test]
fn the_readme_shows_the_example_this_test_runs() {
    let shown = first_rust_block(README).expect("the README has a Rust block");
    assert_eq!(
        shown, FIRST_EXAMPLE,
        "the README's first Rust block and crates/stagger/tests/readme/first_example.rs \
         differ: the test runs the file, so make the two the same"
    );
    // The block is the one under the first example's heading, and it is a whole program.
    let heading = README.find("## A first example").expect("the heading");
    assert!(README[heading..].starts_with(&format!("## A first example\n\n```rust\n{shown}")));
    assert!(shown.contains("#[tokio::main]\nasync fn main()"));
    assert!(shown.lines().count() < 15, "under 15 lines");
}

#[test]
fn the_block_is_found_by_its_fence() {
    let text = "# T\n\n```toml\na = 1\n```\n\n```rust\nfn f() {}\n```\n\n```rust\nfn g() {}\n```\n";
    assert_eq!(first_rust_block(text), Some("fn f() {}\n"));
    assert_eq!(first_rust_block("no code"), None);
    assert_eq!(first_rust_block("```rust\nunterminated"), None);
}

/// One reply of the loopback server: a status line and headers, and a body.
struct Reply {
    head: &'static str,
    body: &'static str,
}

/// Serves `replies` in order, one connection each, and returns when each request arrived,
/// read on the monotonic clock.
async fn serve(listener: TcpListener, replies: Vec<Reply>) -> Vec<Timestamp> {
    let clock = MonotonicClock::new();
    let mut arrivals = Vec::new();
    for reply in replies {
        let (mut socket, _) = listener.accept().await.expect("a connection");
        let (mut head, mut buf) = (Vec::new(), [0u8; 1024]);
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.expect("a request");
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        arrivals.push(clock.now());
        let response = format!(
            "HTTP/1.1 {}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{}",
            reply.head,
            reply.body.len(),
            reply.body
        );
        socket
            .write_all(response.as_bytes())
            .await
            .expect("the reply is sent");
    }
    arrivals
}

/// A loopback server serving `replies`, and its URL.
async fn server(replies: Vec<Reply>) -> (String, tokio::task::JoinHandle<Vec<Timestamp>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let url = format!("http://{}/", listener.local_addr().expect("an address"));
    (url, tokio::spawn(serve(listener, replies)))
}

#[tokio::test]
async fn a_429_with_retry_after_1_is_retried_no_sooner_than_a_second_later() {
    let (url, server) = server(vec![
        Reply {
            head: "429 Too Many Requests\r\nretry-after: 1",
            body: "slow down",
        },
        Reply {
            head: "200 OK",
            body: "hello",
        },
    ])
    .await;

    let body = first_example::call_get(&url)
        .await
        .expect("the second attempt succeeds");
    assert_eq!(body, "hello");

    let arrivals = server.await.expect("the server ran");
    assert_eq!(arrivals.len(), 2, "two attempts reached the server");
    let gap = arrivals[1].saturating_duration_since(arrivals[0]);
    // Measured at the server: the client waited at least the second it was told to.
    assert!(
        gap >= Duration::from_secs(1),
        "retried {gap:?} after the 429"
    );
}

#[tokio::test]
async fn a_status_not_worth_retrying_ends_the_call_at_once() {
    let (url, server) = server(vec![Reply {
        head: "404 Not Found",
        body: "no such page",
    }])
    .await;

    let error = first_example::call_get(&url)
        .await
        .expect_err("a 404 is not retried");
    let message = error.to_string();
    assert!(message.contains("gave up after 1 attempt"), "{message}");
    assert!(message.contains("not retryable"), "{message}");
    assert_eq!(server.await.expect("the server ran").len(), 1);
}

#[tokio::test]
async fn a_malformed_url_is_not_retried() {
    let error = first_example::call_get("not a url")
        .await
        .expect_err("nothing to send");
    let message = error.to_string();
    assert!(message.contains("gave up after 1 attempt"), "{message}");
}
