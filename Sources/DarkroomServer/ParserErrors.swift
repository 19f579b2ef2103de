import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// A request the HTTP parser cannot read (a garbage request line, a negative or doubled
/// `Content-Length`, `Content-Length` beside `Transfer-Encoding`, a header past the limit)
/// never reaches a route: Hummingbird answers it with a bare `400` and closes the
/// connection. This handler gives that answer the JSON error every other route gives. It
/// knows the answer by its shape: a `400` with `Connection: close`, no body and no content
/// type, which no route of Darkroom's sends (theirs all carry the JSON error).
final class ParserErrorBody: ChannelOutboundHandler, RemovableChannelHandler {
  typealias OutboundIn = HTTPResponsePart
  typealias OutboundOut = HTTPResponsePart

  private var replacing = false

  static let body = Array(
    #"{"error":{"status":400,"kind":"http","message":"the request is not well-formed HTTP/1.1"}}"#
      .utf8)

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    switch unwrapOutboundIn(data) {
    case .head(var head)
    where head.status == .badRequest && head.headerFields[.contentLength] == "0"
      && head.headerFields[.contentType] == nil && head.headerFields[.connection] == "close":
      replacing = true
      head.headerFields[.contentLength] = String(Self.body.count)
      head.headerFields[.contentType] = "application/json; charset=utf-8"
      head.headerFields[.cacheControl] = "no-store"
      context.write(wrapOutboundOut(.head(head)), promise: promise)
    case .end(let trailers) where replacing:
      replacing = false
      let buffer = context.channel.allocator.buffer(bytes: Self.body)
      context.write(wrapOutboundOut(.body(buffer)), promise: nil)
      context.write(wrapOutboundOut(.end(trailers)), promise: promise)
    default:
      context.write(data, promise: promise)
    }
  }
}
