//! The request body the inner service receives, and the opt-in buffering that makes a body
//! replayable.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Buf, Bytes, BytesMut};
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

pin_project! {
    /// The body of each attempt's request, as the inner service receives it.
    ///
    /// A [`RetryService`](super::RetryService) may send a request more than once, so it cannot
    /// hand the inner service the caller's body type: a replayed attempt carries a copy of the
    /// body's bytes, a first-and-only attempt carries the caller's body itself. This type is
    /// either. Its data is [`Bytes`] whatever the caller's body yields (a `Bytes` chunk passes
    /// through without copying), and its error is the caller's body's error.
    ///
    /// An inner hyper client is therefore built for `RetryBody<B>`:
    /// `Client::builder(TokioExecutor::new()).build_http::<RetryBody<B>>()`.
    pub struct RetryBody<B: Body> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<B: Body> {
        // The caller's body, streamed once.
        Once { #[pin] body: B },
        // A copy of a body known in full: its data, then its trailers.
        Replay { data: Option<Bytes>, trailers: Option<HeaderMap> },
        // A body too large to buffer: the part read while trying, then the rest, or the error
        // that ended the read.
        Partial {
            head: Option<Bytes>,
            crossing: Option<Bytes>,
            error: Option<B::Error>,
            rest: Option<Pin<Box<B>>>,
        },
    }
}

impl<B: Body> RetryBody<B> {
    /// `body`, sent as it is.
    pub fn new(body: B) -> Self {
        Self {
            kind: Kind::Once { body },
        }
    }

    /// A body of `data` followed by `trailers`: a replayed copy.
    pub(super) fn replay(data: Option<Bytes>, trailers: Option<HeaderMap>) -> Self {
        Self {
            kind: Kind::Replay { data, trailers },
        }
    }

    /// What was read of a body that could not be buffered, then the rest of it.
    fn partial(
        head: Option<Bytes>,
        crossing: Option<Bytes>,
        error: Option<B::Error>,
        rest: Option<Pin<Box<B>>>,
    ) -> Self {
        Self {
            kind: Kind::Partial {
                head,
                crossing,
                error,
                rest,
            },
        }
    }
}

impl<B: Body> Default for RetryBody<B> {
    /// An empty body.
    fn default() -> Self {
        Self::replay(None, None)
    }
}

impl<B: Body> fmt::Debug for RetryBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            Kind::Once { .. } => "once",
            Kind::Replay { .. } => "replay",
            Kind::Partial { .. } => "partial",
        };
        f.debug_struct("RetryBody").field("kind", &kind).finish()
    }
}

/// A chunk of any body's data as `Bytes`: free for `Bytes` itself.
#[inline]
fn to_bytes<D: Buf>(mut data: D) -> Bytes {
    data.copy_to_bytes(data.remaining())
}

impl<B: Body> Body for RetryBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        match self.project().kind.project() {
            KindProj::Once { body } => body
                .poll_frame(cx)
                .map(|frame| frame.map(|frame| frame.map(|frame| frame.map_data(to_bytes)))),
            KindProj::Replay { data, trailers } => {
                if let Some(data) = data.take() {
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Poll::Ready(trailers.take().map(|t| Ok(Frame::trailers(t))))
            }
            KindProj::Partial {
                head,
                crossing,
                error,
                rest,
            } => {
                if let Some(data) = head.take().or_else(|| crossing.take()) {
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                if let Some(error) = error.take() {
                    *rest = None;
                    return Poll::Ready(Some(Err(error)));
                }
                let Some(body) = rest.as_mut() else {
                    return Poll::Ready(None);
                };
                let frame = ready!(body.as_mut().poll_frame(cx));
                Poll::Ready(frame.map(|frame| frame.map(|frame| frame.map_data(to_bytes))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Once { body } => body.is_end_stream(),
            Kind::Replay { data, trailers } => data.is_none() && trailers.is_none(),
            Kind::Partial {
                head,
                crossing,
                error,
                rest,
            } => {
                head.is_none()
                    && crossing.is_none()
                    && error.is_none()
                    && rest.as_ref().is_none_or(|body| body.is_end_stream())
            }
        }
    }

    fn size_hint(&self) -> SizeHint {
        let len = |data: &Option<Bytes>| data.as_ref().map_or(0, |d| d.len() as u64);
        match &self.kind {
            Kind::Once { body } => body.size_hint(),
            Kind::Replay { data, .. } => SizeHint::with_exact(len(data)),
            Kind::Partial {
                head,
                crossing,
                rest,
                ..
            } => {
                let read = len(head) + len(crossing);
                let Some(body) = rest else {
                    return SizeHint::with_exact(read);
                };
                let rest = body.size_hint();
                let mut hint = SizeHint::new();
                hint.set_lower(rest.lower().saturating_add(read));
                if let Some(upper) = rest.upper() {
                    hint.set_upper(upper.saturating_add(read));
                }
                hint
            }
        }
    }
}

/// A request body as the service keeps it for its attempts.
pub(super) enum Source<B: Body> {
    /// Known in full: every attempt gets a copy (a reference-counted `Bytes`, not a copy of
    /// the data).
    Replay {
        data: Option<Bytes>,
        trailers: Option<HeaderMap>,
    },
    /// Sendable once: the caller's body, or what buffering read of it followed by the rest.
    Once(RetryBody<B>),
}

impl<B: Body> Source<B> {
    /// Whether the body can be sent again.
    pub(super) fn replayable(&self) -> bool {
        matches!(self, Self::Replay { .. })
    }

    /// A body for one more attempt, keeping this one, if it can be replayed.
    pub(super) fn copy(&self) -> Option<RetryBody<B>> {
        match self {
            Self::Replay { data, trailers } => {
                Some(RetryBody::replay(data.clone(), trailers.clone()))
            }
            Self::Once(_) => None,
        }
    }

    /// The body for the last attempt.
    pub(super) fn into_body(self) -> RetryBody<B> {
        match self {
            Self::Replay { data, trailers } => RetryBody::replay(data, trailers),
            Self::Once(body) => body,
        }
    }
}

/// Reads a body into memory, up to a limit, so that it can be replayed.
pub(super) struct Buffer<B: Body> {
    body: Option<Pin<Box<B>>>,
    /// The first chunk, kept as it is: a one-chunk body (`Full<Bytes>`) is never copied.
    first: Option<Bytes>,
    /// Every chunk, once there is more than one.
    joined: BytesMut,
    len: usize,
    limit: usize,
    trailers: Option<HeaderMap>,
}

impl<B: Body> Buffer<B> {
    pub(super) fn new(body: B, limit: usize) -> Self {
        Self {
            body: Some(Box::pin(body)),
            first: None,
            joined: BytesMut::new(),
            len: 0,
            limit,
            trailers: None,
        }
    }

    /// What was read so far, as one chunk.
    fn take_read(&mut self) -> Option<Bytes> {
        match self.first.take() {
            Some(first) => Some(first),
            None if self.joined.is_empty() => None,
            None => Some(std::mem::take(&mut self.joined).freeze()),
        }
    }

    fn push(&mut self, chunk: Bytes) {
        self.len += chunk.len();
        if self.joined.is_empty() && self.first.is_none() {
            self.first = Some(chunk);
            return;
        }
        if let Some(first) = self.first.take() {
            self.joined.reserve(self.len);
            self.joined.extend_from_slice(&first);
        }
        self.joined.extend_from_slice(&chunk);
    }

    /// Reads on: the body is replayable if it ended within the limit, and sendable once if it
    /// is larger or failed (the failure then reaches the inner service, as it would have
    /// without buffering). Not to be polled after it is ready.
    pub(super) fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Source<B>> {
        loop {
            let Some(body) = self.body.as_mut() else {
                return Poll::Ready(Source::Once(RetryBody::default()));
            };
            match ready!(body.as_mut().poll_frame(cx)) {
                None => {
                    self.body = None;
                    let data = self.take_read();
                    let trailers = self.trailers.take();
                    return Poll::Ready(Source::Replay { data, trailers });
                }
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        let chunk = to_bytes(data);
                        if chunk.is_empty() {
                            continue;
                        }
                        if self.len.saturating_add(chunk.len()) > self.limit {
                            let rest = self.body.take();
                            let head = self.take_read();
                            return Poll::Ready(Source::Once(RetryBody::partial(
                                head,
                                Some(chunk),
                                None,
                                rest,
                            )));
                        }
                        self.push(chunk);
                    }
                    Err(frame) => {
                        // Trailers end a body; frames of other kinds are not part of it.
                        if let Ok(trailers) = frame.into_trailers() {
                            match &mut self.trailers {
                                Some(all) => all.extend(trailers),
                                None => self.trailers = Some(trailers),
                            }
                        }
                    }
                },
                Some(Err(error)) => {
                    self.body = None;
                    let head = self.take_read();
                    return Poll::Ready(Source::Once(RetryBody::partial(
                        head,
                        None,
                        Some(error),
                        None,
                    )));
                }
            }
        }
    }
}
