import Foundation
import Logging

extension Library {
  /// The gallery's thumbnails kept made in the background until the calling task is
  /// cancelled: a whole pass at start (newest first), then the photos the change log names
  /// as they come. When another process's pass holds the library (after a scan), it looks
  /// again later: one pass a library. With `images`, a render starts only while none of
  /// theirs runs or waits, so people's own requests go first. The renders run on a thread
  /// of their own at background priority; after cancellation this returns once the photo in
  /// hand is done.
  package func keepThumbnails(yieldingTo images: Images? = nil, logger: Logger) async {
    let stop = StopSignal()
    let library = self
    await withTaskCancellationHandler {
      await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        Thread {
          BackgroundPriority.lowerThisThread()
          library.thumbnailPasses(yieldingTo: images, stop: stop, logger: logger)
          done.resume()
        }.start()
      }
    } onCancel: {
      stop.fire()
    }
  }

  private func thumbnailPasses(yieldingTo images: Images?, stop: StopSignal, logger: Logger) {
    var options = GridThumbnailOptions()
    options.shouldStop = { stop.fired }
    if let images {
      options.beforeRender = {
        while images.queueDepth > 0, !stop.wait(seconds: 0.02) {}
      }
    }
    var seen: Int64 = 0
    var whole = true
    while !stop.fired {
      do {
        if whole {
          let before = try lastChange()
          let summary = try Self.withBackgroundWorkers(options) { (options) throws(DarkroomError) in
            try makeGridThumbnails(options)
          }
          if summary.busy {
            _ = stop.wait(seconds: 30)  // another process's pass: look again later
            continue
          }
          logger.info(
            "background thumbnails: \(summary.made) made, \(summary.had) cached, \(summary.failed) failed, \(summary.assets) photos in \(summary.seconds) s"
          )
          (seen, whole) = (before, false)
        }
        if stop.wait(seconds: 2) { break }
        let changes = try self.changes(since: seen, limit: 1000)
        guard let last = changes.last else { continue }
        let ids = changes.filter { $0.kind != .removed }.map(\.id)
        let summary = try Self.withBackgroundWorkers(options) { (options) throws(DarkroomError) in
          try makeGridThumbnails(of: Array(Set(ids)), options)
        }
        if !summary.busy { seen = last.sequence }
      } catch {
        logger.warning("background thumbnails: \(error); trying again in a minute")
        _ = stop.wait(seconds: 60)
      }
    }
  }

  /// Runs `body` with `options` whose renders go to workers of their own, which lower
  /// themselves to background priority as they start (``WorkerPool/Configuration/background``),
  /// and ends them after it: an idle server holds none. The pool people's renders use is
  /// never touched by the pass, so none of its workers is lowered for good. Where the
  /// process routes no work to workers, the renders stay on the calling thread (lowered).
  static func withBackgroundWorkers<T>(
    _ options: GridThumbnailOptions,
    _ body: (GridThumbnailOptions) throws(DarkroomError) -> T
  ) throws(DarkroomError) -> T {
    guard var configuration = Containment.configuration else { return try body(options) }
    configuration.background = true
    configuration.idleWorkers = 1
    let pool = WorkerPool(configuration)
    defer { pool.shutDown() }
    var options = options
    options.pixels.workers = pool
    return try body(options)
  }
}
