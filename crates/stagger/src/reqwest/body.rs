//! A response's body read under the time its attempt had.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use ::reqwest::{Response, ResponseBuilderExt};
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

/// `response`, its body read under `limit`: the time its attempt had, from the attempt's start.
/// Everything else is the response reqwest returned: its status, headers, extensions and URL.
pub(super) fn read_under(response: Response, limit: tokio::time::Sleep) -> Response {
    let url = response.url().clone();
    let (mut parts, body) = http::Response::<::reqwest::Body>::from(response).into_parts();
    // The conversion back takes the URL from an extension that only `ResponseBuilderExt::url`
    // can set.
    if let Some(carrier) = http::response::Builder::new().url(url).extensions_mut() {
        parts.extensions.extend(std::mem::take(carrier));
    }
    let body = ::reqwest::Body::wrap(UnderLimit { body, limit });
    Response::from(http::Response::from_parts(parts, body))
}

pin_project! {
    /// A response body that fails with a timeout once `limit` has passed before it ended.
    struct UnderLimit<B> {
        #[pin]
        body: B,
        #[pin]
        limit: tokio::time::Sleep,
    }
}

impl<B> Body for UnderLimit<B>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = B::Data;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<std::result::Result<Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        // As reqwest's own timeout: once the time is up, the body fails, read or not. An I/O
        // error of kind `TimedOut` makes the caller's `reqwest::Error::is_timeout` true.
        if this.limit.poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Box::new(io::Error::new(
                io::ErrorKind::TimedOut,
                "the response body did not end within the retry deadline or attempt timeout",
            )))));
        }
        this.body.poll_frame(cx).map_err(Into::into)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
