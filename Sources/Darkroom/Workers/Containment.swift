#if canImport(Glibc)
  import Glibc
#endif

/// Where this process parses and decodes bytes it did not make: in sandboxed workers, or
/// here.
///
/// Once a process has said which workers to use, reading a file's header
/// (``AssetMetadata/read(_:)``: libvips' loaders and sniffers, libexif) and rendering it
/// (``Renderer``) happen in a worker for every file in the scope: with `.untrustedFormats`,
/// for the formats outside ``TrustedFormats/trusted`` that a person allowed (an SVG that
/// hangs its loader, a JPEG 2000 file that corrupts the heap then cost one file a line, never
/// the process); with `.everyFile`, for all (a server, a scan, a batch: long-lived processes,
/// or ones that hold what a hostile file must not reach). Without it, everything is read
/// here, as a library embedding Darkroom without workers expects.
///
/// ```swift
/// Containment.useWorkers(.init(executable: "/usr/local/bin/darkroom"), for: .everyFile)
/// let metadata = try AssetMetadata.read(path: "drawing.svg")  // parsed in a worker
/// ```
///
/// Process-wide: set it once, before work starts. The workers themselves never use it.
package enum Containment {
  /// Which files go to the workers.
  package enum Scope: Sendable {
    /// Formats outside ``TrustedFormats/trusted`` (and files no magic number names).
    case untrustedFormats
    /// Every file.
    case everyFile
  }

  private struct State {
    var configuration: WorkerPool.Configuration?
    var pool: WorkerPool?
    var scope = Scope.untrustedFormats
    var timeLimit: Duration? = .seconds(60)
  }

  private static let state = Locked(State())

  /// Rendering asks ``Offload`` where a format goes; this answers.
  private static func route() {
    Offload.set { format in
      guard let pool = pool(forFormat: format) else { return nil }
      return (pool, timeLimit)
    }
  }

  /// Parses and decodes the files in `scope` in workers started with `configuration` (the
  /// first when one is needed), each read stopped after `timeLimit`.
  package static func useWorkers(
    _ configuration: WorkerPool.Configuration, for scope: Scope,
    timeLimit: Duration? = .seconds(60)
  ) {
    state.withLock { state in
      state.configuration = configuration
      state.scope = scope
      state.timeLimit = timeLimit
    }
    TrustedFormats.decodingInWorkers()
    route()
  }

  /// Parses and decodes the files in `scope` in workers that run this program's hidden
  /// `worker` command (`/proc/self/exe worker`), `idle` of them kept ready, each with its
  /// share of the cores' libvips threads (or `vipsThreads`): what the `darkroom` command does.
  package static func useThisProgram(
    for scope: Scope, idle: Int = 1, vipsThreads: Int? = nil, timeLimit: Duration? = .seconds(60)
  ) {
    var configuration = WorkerPool.Configuration(executable: thisProgram())
    configuration.idleWorkers = max(1, idle)
    configuration.vipsThreads = vipsThreads ?? ProcessorCount.share(among: idle)
    useWorkers(configuration, for: scope, timeLimit: timeLimit)
  }

  /// Starts the workers now (a server's, kept ready from the start) and returns them, to
  /// give a renderer and to shut down at the end; nil when this process said of none.
  package static func startWorkers() -> (any PixelWorkers)? {
    state.withLock { state -> WorkerPool? in
      guard let configuration = state.configuration else { return nil }
      if state.pool == nil { state.pool = WorkerPool(configuration) }
      return state.pool
    }
  }

  /// The running program, by /proc/self/exe (argv[0] may be a bare name found on PATH).
  package static func thisProgram() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard length > 0 else { return CommandLine.arguments.first ?? "darkroom" }
    return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Uses `pool` (a server's, a batch's) for the files in `scope`.
  package static func useWorkers(_ pool: WorkerPool, for scope: Scope, timeLimit: Duration?) {
    state.withLock { state in
      state.configuration = pool.configuration
      state.pool = pool
      state.scope = scope
      state.timeLimit = timeLimit
    }
    TrustedFormats.decodingInWorkers()
    route()
  }

  /// Stops every worker now: reads under way fail with "abandoned", and none starts after
  /// (for a process asked to stop, once its grace is over).
  package static func abandon() {
    state.withLock { $0.pool }?.abandon()
  }

  /// The configuration of the workers this process uses, if it said which.
  static var configuration: WorkerPool.Configuration? { state.withLock { $0.configuration } }

  /// The time limit of a header read in a worker (nil: none).
  package static var timeLimit: Duration? {
    get { state.withLock { $0.timeLimit } }
    set { state.withLock { $0.timeLimit = newValue } }
  }

  /// The workers a file in `format` (as its first bytes name it; nil for none) goes to; nil
  /// when it is read in this process.
  static func pool(forFormat format: String?) -> WorkerPool? {
    state.withLock { state -> WorkerPool? in
      guard let configuration = state.configuration else { return nil }
      if state.scope == .untrustedFormats, let format, TrustedFormats.trusted.contains(format) {
        return nil
      }
      if state.pool == nil { state.pool = WorkerPool(configuration) }
      return state.pool
    }
  }
}
