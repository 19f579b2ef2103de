import Darkroom
import HTTPTypes
import Logging
import NIOCore
import NIOHTTPTypes

#if canImport(Glibc)
  import Glibc
#endif

/// What a stranger can hold of the server: connections from one client address, and in all.
/// Past the first, a new connection from that address is closed at once (a clean close,
/// nothing read); past the second, a new connection's request is answered `503` with
/// `Retry-After` and a JSON error, and it is closed. Refusals are logged, at most one line a
/// second for each kind. (An idle or slow connection is closed by the HTTP channel's idle
/// timeout: ``ServerConfiguration/idleTimeout``, which also bounds how long a request's head
/// may take to arrive.)
final class ConnectionLimits: Sendable {
  let perClient: Int
  let total: Int
  let logger: Logger
  private struct State {
    var open: [String: Int] = [:]
    var total = 0
    var refused = (perClient: 0, full: 0)
    var lastLog: ContinuousClock.Instant?
  }
  private let state = Locked(State())

  /// `perClient` and `total` of 0 set no limit.
  init(perClient: Int, total: Int, logger: Logger) {
    (self.perClient, self.total, self.logger) = (perClient, total, logger)
  }

  enum Verdict {
    case admitted, overClientLimit, full
  }

  /// Counts a new connection from `client`: whether it may be served.
  func open(_ client: String) -> Verdict {
    let (verdict, line) = state.withLock { state -> (Verdict, String?) in
      let mine = state.open[client, default: 0]
      let verdict: Verdict
      if perClient > 0, mine >= perClient {
        verdict = .overClientLimit
        state.refused.perClient += 1
      } else if total > 0, state.total >= total {
        verdict = .full
        state.refused.full += 1
      } else {
        verdict = .admitted
        state.open[client] = mine + 1
        state.total += 1
      }
      guard verdict != .admitted else { return (verdict, nil) }
      let now = ContinuousClock.now
      if let last = state.lastLog, now - last < .seconds(1) { return (verdict, nil) }
      state.lastLog = now
      let line =
        "refused connections: \(state.refused.perClient) past \(perClient) from one address"
        + " (last \(client)), \(state.refused.full) past \(total) in all"
      return (verdict, line)
    }
    if let line { logger.warning("\(line)") }
    return verdict
  }

  /// A connection `open` admitted has closed.
  func close(_ client: String) {
    state.withLock { state in
      state.total -= 1
      let left = state.open[client, default: 1] - 1
      state.open[client] = left > 0 ? left : nil
    }
  }

  /// The handler for one connection's pipeline.
  func handler() -> Handler { Handler(limits: self) }

  /// Counts its connection while it is open, and turns it away when a limit says so.
  final class Handler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let limits: ConnectionLimits
    private var client: String?
    private var verdict = Verdict.admitted

    init(limits: ConnectionLimits) { self.limits = limits }

    static let busy = Array(
      #"{"error":{"status":503,"kind":"busy","message":"the server has as many connections as it takes: retry"}}"#
        .utf8)

    func handlerAdded(context: ChannelHandlerContext) {
      let client = context.channel.remoteAddress?.ipAddress ?? "local"
      verdict = limits.open(client)
      if verdict == .admitted { self.client = client }
      if verdict == .overClientLimit { context.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
      if let client { limits.close(client) }
      client = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
      switch verdict {
      case .admitted: context.fireChannelRead(data)
      case .overClientLimit: break
      case .full:
        guard case .head = unwrapInboundIn(data) else { return }
        verdict = .overClientLimit  // answered once; the rest of the request is dropped
        var head = HTTPResponse(status: .serviceUnavailable)
        head.headerFields[.contentType] = "application/json; charset=utf-8"
        head.headerFields[.contentLength] = String(Self.busy.count)
        head.headerFields[.retryAfter] = "1"
        head.headerFields[.connection] = "close"
        head.headerFields[.cacheControl] = "no-store"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        let body = context.channel.allocator.buffer(bytes: Self.busy)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        // The channel (Sendable), not the context, is what the completion may hold.
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
          channel.close(promise: nil)
        }
      }
    }
  }
}
