import Darkroom
import FoundationEssentials
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Prometheus

/// The server's counters, in one Prometheus registry (served at `/metrics`).
package final class ServerMetrics: Sendable {
  package let registry = PrometheusCollectorRegistry()
  /// Cold renders started (coalesced requests count once).
  package let renders: Counter
  /// Cold renders refused because the queue was full (503).
  package let rendersRejected: Counter
  /// Cold renders running or waiting.
  package let renderQueue: Gauge
  let requestDuration: DurationHistogram

  /// The render queue's callbacks, counted here.
  var renderObserver: Images.Observer {
    var observer = Images.Observer()
    let (renders, rejected, queue) = (renders, rendersRejected, renderQueue)
    observer.renderStarted = { renders.increment() }
    observer.renderRefused = { rejected.increment() }
    observer.queueDepth = { queue.set(Double($0)) }
    return observer
  }

  init() {
    func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
      MetricNameDescriptor(
        namespace: "darkroom", metricName: metric, unitName: unit, helpText: help)
    }
    renders = registry.makeCounter(
      descriptor: name("renders", "total", "Cold renders started (coalesced requests once)."))
    rendersRejected = registry.makeCounter(
      descriptor: name("renders_rejected", "total", "Cold renders refused: the queue was full."))
    renderQueue = registry.makeGauge(
      descriptor: name("render_queue", "renders", "Cold renders running or waiting."))
    requestDuration = registry.makeDurationHistogram(
      descriptor: name(
        "http_request_duration", "seconds", "Time from a request's head to its response's head."),
      buckets: [
        .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(50),
        .milliseconds(100), .milliseconds(500), .seconds(1), .seconds(5),
      ])
  }

  private static let requests = (metric: "http_requests", help: "Responses by status.")

  private let statusCounters = Locked<[Int: Counter]>([:])

  func count(status: Int) {
    let counter = statusCounters.withLock { counters in
      if let counter = counters[status] { return counter }
      let descriptor = MetricNameDescriptor(
        namespace: "darkroom", metricName: Self.requests.metric, unitName: "total",
        helpText: Self.requests.help)
      let counter = registry.makeCounter(
        descriptor: descriptor, labels: [("status", String(status))])
      counters[status] = counter
      return counter
    }
    counter.increment()
  }
}

/// One log line per request (method, path, status, milliseconds) and its metrics. The
/// outermost middleware, so it sees the status the client gets.
struct RequestLogMiddleware: RouterMiddleware {
  let metrics: ServerMetrics

  func handle(
    _ request: Request, context: DarkroomRequestContext,
    next: (Request, DarkroomRequestContext) async throws -> Response
  ) async throws -> Response {
    let start = ContinuousClock.now
    let response = try await next(request, context)
    let elapsed = ContinuousClock.now - start
    metrics.requestDuration.record(elapsed)
    metrics.count(status: response.status.code)
    // Tenths of a millisecond, without a formatter (this runs for every request).
    let tenths =
      elapsed.components.seconds * 10_000 + elapsed.components.attoseconds / 100_000_000_000_000
    context.logger.info(
      "\(request.method) \(request.uri.path) \(response.status.code) \(tenths / 10).\(tenths % 10) ms"
    )
    return response
  }
}

/// Headers every response carries: a strict Content-Security-Policy (no inline script, no
/// other host), no MIME sniffing, no framing, no referrer.
struct SecurityHeadersMiddleware: RouterMiddleware {
  let policy: String
  /// The four fields, made (and their values checked) once: every response of the server
  /// carries them, a cached thumbnail's too.
  private let fields: [HTTPField]

  /// The policy, with `images` (a map's tile server) allowed as a source of images.
  static func policy(images origin: String?) -> String {
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:"
      + (origin.map { " " + $0 } ?? "") + "; "
      + "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
      + "frame-ancestors 'none'"
  }

  init(imagesFrom origin: String? = nil) {
    policy = Self.policy(images: origin)
    fields = [
      HTTPField(name: .contentSecurityPolicy, value: policy),
      HTTPField(name: .xContentTypeOptions, value: "nosniff"),
      HTTPField(name: .frameOptions, value: "DENY"),
      // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on
      // its own form posts, which the CSRF check must refuse.
      HTTPField(name: .referrerPolicy, value: "same-origin"),
    ]
  }

  func handle(
    _ request: Request, context: DarkroomRequestContext,
    next: (Request, DarkroomRequestContext) async throws -> Response
  ) async throws -> Response {
    var response = try await next(request, context)
    for field in fields { response.headers[fields: field.name] = [field] }
    return response
  }
}

/// An error the API answers with, as JSON: `{"error": {"status", "kind", "message"}}`.
package struct APIError: Error, Sendable {
  package var status: HTTPResponse.Status
  package var kind: String
  package var message: String
  /// For a file that cannot be shown, what is wrong in a sentence for people ("This
  /// photo's file is cut short"), beside `message`'s decoder's words.
  package var problem: String?
  package var headers: HTTPFields = [:]

  package init(_ status: HTTPResponse.Status, _ kind: String, _ message: String) {
    (self.status, self.kind, self.message) = (status, kind, message)
  }

  static func badRequest(_ message: String) -> APIError {
    .init(.badRequest, "bad-request", message)
  }
  static func notFound(_ message: String) -> APIError { .init(.notFound, "not-found", message) }
}

/// Turns whatever a handler throws into a JSON error with a 4xx status (a 5xx only for the
/// server's own failures, such as a disk that cannot be written), naming files relative to
/// the library so no server path leaks.
struct ErrorMiddleware: RouterMiddleware {
  let library: Library

  func handle(
    _ request: Request, context: DarkroomRequestContext,
    next: (Request, DarkroomRequestContext) async throws -> Response
  ) async throws -> Response {
    do {
      return try await next(request, context)
    } catch {
      let apiError = translate(error)
      if apiError.status.code >= 500 {
        context.logger.error(
          "\(request.method) \(request.uri.path): \(Self.logged(error, path: request.uri.path))")
      }
      return Self.response(apiError)
    }
  }

  /// What the log says of a server's failure: the error, but for a space's request without
  /// the file it names (a space's names are sealed with its photos: a log keeps none).
  static func logged(_ error: any Error, path: String) -> String {
    let space = ["/space", "/api/space"].contains { path == $0 || path.hasPrefix($0 + "/") }
    guard space else { return "\(error)" }
    guard let error = error as? DarkroomError else { return "\(type(of: error))" }
    return error.message
  }

  static func response(_ error: APIError) -> Response {
    struct Body: Encodable {
      struct Detail: Encodable {
        var status: Int
        var kind: String
        var message: String
        var problem: String?
      }
      var error: Detail
    }
    let body = Body(
      error: .init(
        status: error.status.code, kind: error.kind, message: error.message,
        problem: error.problem))
    var headers = error.headers
    headers[.contentType] = "application/json; charset=utf-8"
    headers[.cacheControl] = "no-store"
    let bytes = (try? JSONEncoder().encode(body)).map { Array($0) } ?? Array("{}".utf8)
    return Response(
      status: error.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
  }

  func translate(_ error: any Error) -> APIError {
    switch error {
    case let error as APIError: return error
    case let error as DarkroomError: return Self.translate(error, library: library)
    case let error as HTTPError:
      let kind = error.status == .notFound ? "not-found" : "http"
      let message =
        error.body ?? (error.status == .notFound ? "no such page" : error.status.reasonPhrase)
      return APIError(error.status, kind, message)
    case is DecodingError:
      return .badRequest("the JSON body does not match what this call takes")
    case is NIOTooManyBytesError:
      return APIError(
        .contentTooLarge, "too-large",
        "the request body is larger than this call takes (\(Self.bodyLimitText))")
    default:
      // The detail goes to the log only: no SQL, path or type name reaches a client.
      return APIError(.internalServerError, "server", "the server failed; its log says why")
    }
  }

  static let bodyLimitText = "4 MiB for JSON"

  static func translate(_ error: DarkroomError, library: Library) -> APIError {
    let status: HTTPResponse.Status =
      switch error.kind {
      case .notFound: .notFound
      case .invalidArgument: .badRequest
      case .tooLarge: .contentTooLarge
      case .io: .internalServerError
      case .busy: .serviceUnavailable
      case .conflict: .conflict
      // A file that cannot be decoded, crashes or hangs a decoder: the file's fault.
      case .empty, .truncated, .corrupt, .unsupportedFormat, .isDirectory, .unreadable,
        .timedOut, .engine:
        .unprocessableContent
      }
    // The server's own failure: the detail (a catalog's SQL, a path) goes to the log only.
    if status == .internalServerError {
      return APIError(status, error.kind.rawValue, "the server failed; its log says why")
    }
    var message = library.scrubbed(error.message)
    if let file = error.file {
      let name = library.relativePath(file) ?? FilePath(file).lastComponent
      message = "\(name): \(message)"
    }
    var translated = APIError(status, error.kind.rawValue, message)
    if status == .unprocessableContent || error.kind == .tooLarge {
      translated.problem = AssetDamage.problem(error.kind, video: nil)
    }
    if error.kind == .busy { translated.headers[.retryAfter] = "1" }
    return translated
  }

}

/// A token bucket per client address; 429 with `Retry-After` past it.
struct RateLimitMiddleware: RouterMiddleware {
  let limiter: RateLimiter

  func handle(
    _ request: Request, context: DarkroomRequestContext,
    next: (Request, DarkroomRequestContext) async throws -> Response
  ) async throws -> Response {
    if let wait = limiter.admit(context.client) {
      var error = APIError(.tooManyRequests, "rate-limited", "too many requests: slow down")
      error.headers[.retryAfter] = String(wait)
      throw error
    }
    return try await next(request, context)
  }
}

/// Paths inside a library as plain strings.
struct FilePath {
  let path: String
  init(_ path: String) { self.path = path }
  var lastComponent: String { path.split(separator: "/").last.map(String.init) ?? path }
}

extension HTTPField.Name {
  static let frameOptions = Self("X-Frame-Options")!
  static let referrerPolicy = Self("Referrer-Policy")!
  static let csrfToken = Self("X-CSRF-Token")!
  static let lastEventID = Self("Last-Event-ID")!
  static let forwardedProto = Self("X-Forwarded-Proto")!
  static let accelRedirect = Self("X-Accel-Redirect")!
  static let accelExpires = Self("X-Accel-Expires")!
}

/// A known path asked with a method it does not take: 405 with `Allow`, as HTTP says (the
/// router alone answers 404, as if the path did not exist). The table is the router's own,
/// read once its routes are added.
struct MethodNotAllowedMiddleware: RouterMiddleware {
  /// Each route's path, split at slashes, and the methods it takes.
  final class Table: Sendable {
    private let routes = Locked<[(segments: [Substring], methods: Set<String>)]>([])

    func fill(_ descriptions: [Router<DarkroomRequestContext>.RouteDescription]) {
      var byPath: [String: Set<String>] = [:]
      for route in descriptions {
        byPath[route.path.description, default: []].insert(route.method.rawValue)
        // Every GET answers HEAD too (the router makes those endpoints itself).
        if route.method == .get { byPath[route.path.description, default: []].insert("HEAD") }
      }
      routes.withLock { routes in
        routes = byPath.map { (Self.segments($0.key), $0.value) }
      }
    }

    /// The methods `path` takes; empty when no route has it.
    func methods(for path: String) -> Set<String> {
      let asked = Self.segments(path)
      // As the router resolves a path: a literal segment wins over a capture, so only the
      // most literal of the routes that match count (`/api/assets/ID/edit` is the edit
      // route's alone, not also `/api/assets/ID/{rep}`'s).
      let matching = routes.withLock { routes in
        routes.filter { Self.matches($0.segments, asked) }
      }
      let best = matching.map { Self.literals($0.segments) }.max() ?? 0
      return matching.filter { Self.literals($0.segments) == best }
        .reduce(into: Set()) { $0.formUnion($1.methods) }
    }

    private static func literals(_ pattern: [Substring]) -> Int {
      pattern.filter { !$0.hasPrefix("{") && !$0.hasPrefix(":") && !$0.hasPrefix("*") }.count
    }

    private static func segments(_ path: String) -> [Substring] {
      path.split(separator: "/", omittingEmptySubsequences: true)
    }

    /// `{name}`, `:name` and `*` take any one segment; `**` the rest.
    private static func matches(_ pattern: [Substring], _ asked: [Substring]) -> Bool {
      for (index, part) in pattern.enumerated() {
        if part == "**" { return true }
        guard index < asked.count else { return false }
        if part.hasPrefix("{") || part.hasPrefix(":") || part == "*" { continue }
        if part != asked[index] { return false }
      }
      return pattern.count == asked.count
    }
  }

  let table: Table

  func handle(
    _ request: Request, context: DarkroomRequestContext,
    next: (Request, DarkroomRequestContext) async throws -> Response
  ) async throws -> Response {
    // Only when the router found nothing (so the check costs a request that has a route
    // nothing): a path it knows, asked with another method, is a 405.
    do {
      return try await next(request, context)
    } catch let error as HTTPError where error.status == .notFound {
      let allowed = table.methods(for: request.uri.path)
      guard !allowed.isEmpty, !allowed.contains(request.method.rawValue) else { throw error }
      let list = allowed.sorted().joined(separator: ", ")
      var answer = APIError(
        .methodNotAllowed, "method-not-allowed",
        "\(request.method.rawValue.prefix(16)) is not allowed here: \(list)")
      answer.headers[.allow] = list
      throw answer
    }
  }
}
