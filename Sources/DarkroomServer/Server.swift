import Darkroom
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

/// `darkroom serve`: a library over HTTP, as a JSON API (`/api`), a web gallery (`/`) and
/// Prometheus metrics (`/metrics`), built on Hummingbird. Every route is a thin call into
/// ``Library``; this type only wires them together.
///
/// ```swift
/// let server = try DarkroomServer(library: library, configuration: configuration)
/// try await server.application().runService()  // until SIGINT or SIGTERM
/// ```
package struct DarkroomServer: Sendable {
  package let library: Library
  package let configuration: ServerConfiguration
  package let metrics = ServerMetrics()
  let sessions: Sessions
  /// Representations: 64 MiB of those served lately in memory, the disk cache, and the
  /// bounded render queue.
  let images: Images
  let jobs: Jobs
  let gallery: Gallery
  /// With `--signed-renditions`: the signer of the listings' rendition addresses.
  let signing: SignedAddresses?

  /// A server of `library`, which must have a catalog (`darkroom scan` makes it).
  ///
  /// - Throws: `notFound` when the library has no catalog.
  package init(library: Library, configuration: ServerConfiguration) throws(DarkroomError) {
    guard library.hasCatalog else {
      throw DarkroomError(
        .notFound, file: library.root.path, "has no catalog: run darkroom scan there first")
    }
    self.library = library
    self.configuration = configuration
    if let lifetime = configuration.signedRenditions {
      signing = SignedAddresses(
        library: library, signer: try library.renditionSigner(), lifetime: lifetime)
    } else {
      signing = nil
    }
    sessions = Sessions(
      spaceIdle: configuration.spaceIdle,
      store: try SessionStore.open(library: library))
    var settings = Images.Settings()
    settings.pixels = configuration.pixels
    settings.renders = configuration.renderSlots
    settings.waiting = configuration.renderQueueBound
    settings.observer = metrics.renderObserver
    images = Images(library, settings: settings)
    jobs = Jobs(
      library: library, pixels: configuration.pixels, concurrency: configuration.batchJobs)
    gallery = try Gallery(
      library: library, sessions: sessions, tokens: configuration.tokens,
      servesSpaces: configuration.spaces != nil, failedLogins: configuration.failedLogins,
      map: configuration.mapTiles.map { ($0, configuration.mapAttribution) })
  }

  /// The routes, behind their middleware: log and metrics, security headers, JSON errors,
  /// the rate limit, then access.
  package func router() -> Router<DarkroomRequestContext> {
    let router = Router(context: DarkroomRequestContext.self, options: .autoGenerateHeadEndpoints)
    router.add(middleware: RequestLogMiddleware(metrics: metrics))
    router.add(middleware: SecurityHeadersMiddleware(imagesFrom: configuration.mapTilesOrigin))
    router.add(middleware: ErrorMiddleware(library: library))
    router.add(
      middleware: RateLimitMiddleware(
        limiter: RateLimiter(rate: configuration.rateLimit, burst: configuration.rateBurst)))
    router.add(
      middleware: AccessMiddleware(
        tokens: configuration.tokens, sessions: sessions, signing: signing))
    let methods = MethodNotAllowedMiddleware.Table()
    router.add(middleware: MethodNotAllowedMiddleware(table: methods))
    router.get("healthz") { _, _ in "ok\n" }
    router.get("metrics") { [metrics] _, _ in
      Response(
        status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
        body: .init(byteBuffer: ByteBuffer(bytes: metrics.registry.emitToBuffer())))
    }
    let api = API(
      library: library, configuration: configuration, images: images, jobs: jobs,
      signing: signing)
    api.add(to: router)
    gallery.add(to: router)
    SharedRoutes(
      library: library, images: images, gallery: gallery,
      failedPasswords: configuration.failedLogins
    ).add(to: router)
    SpaceRoutes(
      folder: configuration.spaces, sessions: sessions, configuration: configuration, api: api,
      gallery: gallery
    ).add(to: router)
    methods.fill(router.routes)
    return router
  }

  /// The application: the HTTP server, the library's watcher (which keeps the catalog, and
  /// so the change feed, up to date) and the batch jobs, stopped gracefully together.
  /// `onRunning` gets the port listened on (useful with port 0).
  package func application(
    logger: Logger = Logger(label: "darkroom"), watch: Bool = true,
    onRunning: @escaping @Sendable (Int) async -> Void = { _ in }
  ) -> some ApplicationProtocol {
    var services: [any Service] = [JobsService(jobs: jobs), SpaceLockService(sessions: sessions)]
    if watch { services.append(WatchService(library: library, logger: logger)) }
    if configuration.backgroundThumbnails {
      services.append(ThumbnailService(library: library, images: images, logger: logger))
    }
    let limits = ConnectionLimits(
      perClient: configuration.maxConnectionsPerClient,
      total: Self.connectionRoom(configuration.maxConnections), logger: logger)
    return Application(
      router: router(),
      server: .http1(
        configuration: .init(
          additionalChannelHandlers: [limits.handler(), ParserErrorBody()],
          idleTimeout: .nanoseconds(Int64(configuration.idleTimeout.nanoseconds))
        )),
      configuration: .init(
        address: .hostname(configuration.host, port: configuration.port), serverName: "darkroom"),
      services: services,
      onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
      logger: logger)
  }
}

extension DarkroomServer {
  /// The connections this process can hold at once, at most `wanted` (0: as many as it can):
  /// its open files limit, raised to the hard limit, less 256 for files, workers and the
  /// catalog, so that a full server answers 503 instead of failing to accept.
  static func connectionRoom(_ wanted: Int) -> Int {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return wanted }
    if limit.rlim_cur < limit.rlim_max {
      var raised = limit
      raised.rlim_cur = limit.rlim_max
      if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
    }
    let room = max(16, Int(clamping: limit.rlim_cur) - 256)
    return wanted > 0 ? min(wanted, room) : room
  }
}

/// Waits, at a graceful stop, for the batch jobs under way to end.
struct JobsService: Service {
  let jobs: Jobs
  func run() async throws {
    try? await gracefulShutdown()
    await jobs.waitForAll()
  }
}

/// The library's watcher on a thread of its own, stopped at a graceful stop.
struct WatchService: Service {
  let library: Library
  let logger: Logger

  func run() async throws {
    let watcher: LibraryWatcher
    do {
      watcher = try LibraryWatcher(library: library)
    } catch {
      logger.warning("not watching the library for changes: \(error)")
      try? await gracefulShutdown()
      return
    }
    let thread = Thread { [logger] in
      // The first scan at start walks the whole library (seconds at a million photos):
      // requests go first.
      BackgroundPriority.lowerThisThread()
      do {
        try watcher.run { _ in }
      } catch {
        logger.warning("the library's watcher stopped: \(error)")
      }
    }
    thread.start()
    try? await gracefulShutdown()
    watcher.stop()
  }
}

/// The gallery's thumbnails made in the background (``Library/keepThumbnails(yieldingTo:logger:)``),
/// behind people's own requests, until a graceful stop.
struct ThumbnailService: Service {
  let library: Library
  let images: Images
  let logger: Logger

  func run() async throws {
    let (library, images, logger) = (library, images, logger)
    await cancelWhenGracefulShutdown {
      await library.keepThumbnails(yieldingTo: images, logger: logger)
    }
  }
}

/// Blocking engine work (catalog writes, edits, file moves) off the server's threads.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws(DarkroomError) -> T)
  async throws -> T
{
  try await offThread(work)
}
