//! The tower tests' client side: a hyper-util client, request bodies (whole, streamed,
//! empty), and the bounds every test runs within. Shared by the tower test files, each a
//! concept; a file uses what it needs.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::{Client, Error as ClientError};
use hyper_util::rt::TokioExecutor;
use stagger::RetryError;
use stagger::clock::MonotonicClock;
use stagger::policy::ExponentialFullJitter;
use stagger::tower::{RetryBody, RetryReport};
use tower_service::Service;

use super::stopwatch::Stopwatch;

pub(crate) const BOUND: Duration = Duration::from_secs(10);

/// The request body the tests send: any body, boxed.
pub(crate) type TestBody = BoxBody<Bytes, Infallible>;
pub(crate) type TestClient = Client<HttpConnector, RetryBody<TestBody>>;
pub(crate) type Outcome = Result<Response<Incoming>, RetryError<ClientError>>;

// ---------------------------------------------------------------------------------------------
// The client.

pub(crate) fn client() -> TestClient {
    Client::builder(TokioExecutor::new()).build_http()
}

/// A policy with short delays, so that the tests' time is the server's.
pub(crate) fn quick() -> ExponentialFullJitter {
    ExponentialFullJitter::new()
        .with_base(Duration::from_millis(5))
        .with_max_attempts(4)
}

pub(crate) fn empty() -> TestBody {
    Full::new(Bytes::new()).boxed()
}

pub(crate) fn full(text: &'static str) -> TestBody {
    Full::new(Bytes::from_static(text.as_bytes())).boxed()
}

/// A body that yields its chunks one by one: a stream, which no service can rewind.
pub(crate) struct Stream(VecDeque<Bytes>);

impl hyper::body::Body for Stream {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.0.pop_front().map(|chunk| Ok(Frame::data(chunk))))
    }
}

pub(crate) fn stream(chunks: &[&'static str]) -> TestBody {
    let chunks = chunks.iter().map(|c| Bytes::from_static(c.as_bytes()));
    Stream(chunks.collect()).boxed()
}

/// Sends `request` through `service`, as tower requires: ready first, then call.
pub(crate) async fn send<Svc>(service: &mut Svc, request: Request<TestBody>) -> Outcome
where
    Svc: Service<Request<TestBody>, Response = Response<Incoming>, Error = RetryError<ClientError>>,
{
    std::future::poll_fn(|cx| service.poll_ready(cx)).await?;
    service.call(request).await
}

pub(crate) fn get(url: String) -> Request<TestBody> {
    Request::get(url).body(empty()).unwrap()
}

pub(crate) fn report(response: &Response<Incoming>) -> RetryReport {
    *response
        .extensions()
        .get::<RetryReport>()
        .expect("a retry report")
}

/// Runs `test` on a started server, bounded by [`BOUND`].
pub(crate) async fn bounded<F: Future<Output = ()>>(test: F) {
    tokio::time::timeout(BOUND, test)
        .await
        .expect("the test finished within its bound");
}

/// The time since `clock` started.
pub(crate) fn elapsed(clock: &Stopwatch<MonotonicClock>) -> Duration {
    clock.elapsed()
}

// ---------------------------------------------------------------------------------------------
