import FoundationEssentials

/// Processes that do pixel work instead of this one: ``WorkerPool``'s sandboxed workers.
/// ``Renderer`` and ``AssetMetadata/read(_:)`` send work to them and know nothing else of
/// them, so that rendering sits below the workers that run it.
package protocol PixelWorkers: AnyObject, Sendable {
  /// Kills the work in flight (it fails as abandoned); no work starts after.
  func abandon()
  /// Ends the processes once their work is done.
  func shutDown()
}

/// What is sent to pixel workers (the jobs' own types are the engine's).
protocol PixelWork: PixelWorkers {
  func render(_ source: ImageSource, _ spec: RenditionSpec, with renderer: Renderer)
    throws(DarkroomError) -> Rendition
  func renderEdit(_ source: ImageSource, recipe: EditRecipe, with renderer: Renderer)
    throws(DarkroomError) -> [UInt8]
  func metadata(_ source: ImageSource, limit: Duration?) throws(DarkroomError) -> AssetMetadata
  func metadata(handing file: InputFile, name: String, limit: Duration?) throws(DarkroomError)
    -> AssetMetadata
  func transcode(
    _ video: VideoBytes, name: String, into output: Int32, _ settings: TranscodeSettings,
    graph: FilterGraph?, progress: @escaping (Double, Double) -> Bool, with renderer: Renderer
  ) throws(DarkroomError) -> TranscodeOutcome
}

/// Where this process sends files it did not make, by format: set by ``Containment`` (nil:
/// everything is done here).
enum Offload {
  /// The workers for a format (nil: here), with their time limit for a header read.
  typealias Route = @Sendable (_ format: String?) -> (workers: any PixelWork, limit: Duration?)?

  /// The route, in a box. A closure kept as `Locked`'s value is re-abstracted by every
  /// `withLock` (its `inout` access goes through the generic storage: a thunk around it on
  /// the way in, another on the way back), so each read wrapped the stored closure in two
  /// more thunks: after some 47,000 header reads a call went 95,000 frames deep, and a
  /// 100,000-file scan overflowed the stack. A class reference is stored as it is.
  private final class Box: Sendable {
    let route: Route
    init(_ route: @escaping Route) { self.route = route }
  }
  private static let route = Locked<Box?>(nil)

  static func set(_ route: Route?) { self.route.withLock { $0 = route.map(Box.init) } }

  /// The route set (nil: none).
  static var current: Route? { route.withLock { $0 }?.route }

  /// The workers a file in `format` (as its first bytes name it) goes to.
  static func workers(forFormat format: String?) -> (workers: any PixelWork, limit: Duration?)? {
    guard let box = route.withLock({ $0 }) else { return nil }
    return box.route(format)
  }

  /// The workers `source` goes to, judged by its first bytes (what a render asks before it
  /// reads the file).
  static func workers(for source: ImageSource) -> (any PixelWork)? {
    guard route.withLock({ $0 }) != nil else { return nil }
    let head: [UInt8]
    switch source {
    case .data(let bytes, _): head = Array(bytes.prefix(32))
    case .file(let path):
      // A file that cannot be opened fails the same way wherever it is read.
      guard let file = try? InputFile(path), let bytes = try? file.read(at: 0, count: 32) else {
        return nil
      }
      head = bytes
    }
    return workers(forFormat: TrustedFormats.sniff(head[...], name: source.name))?.workers
  }
}

extension Renderer {
  /// The workers this renderer was given, as work is sent to them.
  var given: (any PixelWork)? { workers as? any PixelWork }
}
