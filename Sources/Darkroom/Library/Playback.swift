import Dispatch
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// How large a video is delivered for playback, as PhotoKit's delivery modes: the box its
/// frames fit in, long side by short side (a portrait video's is turned). Never scaled up.
///
/// `PlaybackQuality` is a `Sendable` value type.
package enum PlaybackQuality: String, Sendable, Codable, CaseIterable {
  /// 854x480.
  case fast
  /// 1280x720.
  case medium
  /// 1920x1080.
  case high

  /// The box, long side by short side.
  package var box: (long: Int, short: Int) {
    switch self {
    case .fast: (854, 480)
    case .medium: (1280, 720)
    case .high: (1920, 1080)
    }
  }
}

/// A video ready to play in any browser: the file as it is, when it is one browsers play
/// already (H.264 with AAC or no sound, in MP4, SDR, within the size asked), else an MP4
/// rendition (H.264 High, yuv420p, BT.709; AAC), made once and cached.
///
/// Read its bytes with ``Library/playbackBytes(_:part:)``. `Playback` is a `Sendable` value.
package struct Playback: Sendable, Equatable {
  /// Where the bytes are.
  package enum Source: Sendable, Equatable {
    /// The asset's own file.
    case asset(AssetID)
    /// The video of a live or motion photo, as it is.
    case motion(AssetID)
    /// A rendition in the library's cache.
    case rendition(path: String)
    /// A rendition sealed in a space, as object `object`, of the asset `id`.
    case sealed(AssetID, object: String)
  }

  package var source: Source
  /// How many bytes it has.
  package var byteSize: Int
  /// `video/mp4`, or the original's media type.
  package var mediaType: String
  /// The frames' size as shown.
  package var width: Int
  package var height: Int
  /// The rendition was in the cache already (for the file as it is: true).
  package var cached: Bool

  /// Whether it is the file as it is, not a rendition.
  package var isOriginal: Bool {
    switch source {
    case .asset, .motion: true
    case .rendition, .sealed: false
    }
  }
}

extension Library {
  /// The longest video a playback rendition is made of, unless the caller says otherwise.
  package static let playbackMaxSeconds = TranscodeSettings.defaultMaxSeconds

  /// A version of asset `id`'s video (a photo's: its live or motion video) that every
  /// browser plays, at `quality`: the file itself when browsers play it already, else
  /// a rendition, made now (in a sandboxed worker where videos go to workers) if the cache
  /// has none. `progress` is told the seconds encoded and in all; false stops the encode.
  ///
  /// A space's rendition is made from its video decrypted into memory and sealed in the
  /// space (``Space/storePlayback(_:of:memoryFile:width:height:)``): no plaintext byte of
  /// either reaches a disk.
  ///
  /// - Throws: A ``DarkroomError`` about the video: `notFound` for an asset or video that
  ///   is not there (a photo without a video); `corrupt` for damage; `tooLarge` for frames
  ///   over the library's pixel limit or a video longer than `maxSeconds`;
  ///   `unsupportedFormat` for a codec FFmpeg does not decode; `io` when the cache cannot be
  ///   written; "the space is locked" for a space's that is, and `engine` ("stopped") when
  ///   it is locked while its rendition is made. Nothing partial is cached.
  package func playback(
    of id: AssetID, quality: PlaybackQuality = .medium,
    maxSeconds: Double = Library.playbackMaxSeconds,
    progress: @escaping @Sendable (_ done: Double, _ total: Double) -> Bool = { _, _ in true }
  ) throws(DarkroomError) -> Playback {
    let plan = try playbackPlan(of: id, quality: quality)
    if let ready = plan.ready() { return ready }
    return try plan.make(maxSeconds: maxSeconds, progress: progress, growing: nil)
  }

  /// As ``playback(of:quality:maxSeconds:progress:)``, without waiting for a rendition
  /// to be made: one being made here already, or started now on a thread of its own, comes
  /// as its bytes so far (a fragmented MP4 plays from its first fragment), readable as they
  /// grow. What it leaves in the cache is the whole rendition, or nothing.
  package func playbackStream(of id: AssetID, quality: PlaybackQuality = .medium)
    throws(DarkroomError) -> PlaybackStream
  {
    let plan = try playbackPlan(of: id, quality: quality)
    if let ready = plan.ready() { return .ready(ready) }
    let key = plan.store.flightKey
    let (growing, start) = GrowingPlayback.inFlight.withLock { flights in
      if let growing = flights[key] { return (growing, false) }
      let growing = GrowingPlayback()
      flights[key] = growing
      return (growing, true)
    }
    guard start else { return .growing(growing) }
    let job = UncheckedPlan(plan)
    DispatchQueue.global().async {
      let result = Result { () throws(DarkroomError) in
        try job.plan.make(
          maxSeconds: Library.playbackMaxSeconds, progress: { _, _ in true }, growing: growing)
      }
      growing.finish(result)
      _ = GrowingPlayback.inFlight.withLock { $0.removeValue(forKey: key) }
    }
    return .growing(growing)
  }

  /// What a playback of asset `id` takes: its video (a photo's live or motion video), header,
  /// and where its rendition is kept (the cache, by content hash and key; or the space).
  private func playbackPlan(of id: AssetID, quality: PlaybackQuality)
    throws(DarkroomError) -> PlaybackPlan
  {
    try storage.playbackPlan(of: id, quality: quality)
  }

  /// ``playbackPlan(of:quality:)`` of a folder's file: its rendition in the cache.
  func filePlaybackPlan(of id: AssetID, quality: PlaybackQuality)
    throws(DarkroomError) -> PlaybackPlan
  {
    let asset = try asset(id)
    let video: VideoBytes
    let name: String
    let original: Playback.Source
    let mediaType: String
    if asset.mediaType != .video {
      let found = try motionVideo(of: id)
      name = found.path
      original = .motion(id)
      mediaType = found.mediaType
      if found.range != nil {
        video = .memory(try motionVideoBytes(of: id))
      } else {
        video = .file(try Beneath.openFile(found.path, in: rootPath))
      }
    } else {
      let file = try openFile(of: asset, exactly: false)
      (video, name, original) = (.file(file), asset.path, .asset(id))
      mediaType = MotionPhoto.Video(path: asset.path, range: nil, format: asset.format).mediaType
    }
    let cache = RenditionCache(folder: cacheFolder)
    let header: VideoHeader
    let content: ContentHash
    let size: Int
    switch video {
    case .file(let file):
      header = try VideoHeader.read(ByteSource(file: file), name: name)
      content = try cache.contentHash(ofFile: file.path)
      size = file.size
    case .memory(let bytes):
      header = try VideoHeader.read(ByteSource(memory: bytes), name: name)
      content = ContentHash.of(bytes: bytes)
      size = bytes.count
    }
    return PlaybackPlan(
      withVideo: { encode throws(DarkroomError) in try encode(video) }, name: name,
      original: original, mediaType: mediaType, header: header,
      size: size, box: Self.playbackBox(quality, header),
      store: .cache(cache, content: content, key: Self.playbackKey(quality)))
  }

  /// The plan of a space's video (a photo's: its motion video): its header read from the
  /// sealed object as far as it needs; the video decrypted into memory only if an encode
  /// needs it; the rendition kept sealed under a keyed name.
  func sealedPlaybackPlan(of id: AssetID, quality: PlaybackQuality, in space: Space)
    throws(DarkroomError) -> PlaybackPlan
  {
    let asset = try sealed(id, in: space)
    let header: VideoHeader
    let withVideo: PlaybackPlan.WithVideo
    let (original, mediaType, size): (Playback.Source, String, Int)
    if asset.isVideo {
      let object = asset.rendered ?? asset.original
      guard let found = try space.videoHeader(object, of: asset) else {
        throw DarkroomError(.corrupt, file: asset.name, "its encrypted object is not a video")
      }
      header = found
      withVideo = { encode throws(DarkroomError) in
        try space.withDecryptedFile(object, of: asset) { file throws(DarkroomError) in
          try encode(.file(file))
        }
      }
      original = .asset(id)
      mediaType = MotionPhoto.Video(path: asset.name, range: nil, format: header.format).mediaType
      size = try space.currentSize(asset)
    } else {
      let bytes = try motionVideoBytes(of: id)
      header = try VideoHeader.read(ByteSource(memory: bytes), name: asset.name)
      withVideo = { encode throws(DarkroomError) in try encode(.memory(bytes)) }
      (original, mediaType, size) = (.motion(id), try motionVideo(of: id).mediaType, bytes.count)
    }
    return PlaybackPlan(
      withVideo: withVideo, name: asset.name, original: original, mediaType: mediaType,
      header: header,
      size: size, box: Self.playbackBox(quality, header),
      store: .space(
        space, asset, id,
        object: space.playbackName(
          asset, shown: asset.isVideo ? asset.rendered : nil, key: Self.playbackKey(quality))))
  }

  /// Bytes `part` of a playback (all of it for nil), read as
  /// ``playback(of:quality:maxSeconds:progress:)`` found them: the asset's file, a photo's
  /// video, the cached rendition, or a space's sealed one (decrypting only the chunks `part`
  /// is in).
  package func playbackBytes(_ playback: Playback, part: Range<Int>? = nil) throws(DarkroomError)
    -> [UInt8]
  {
    switch playback.source {
    case .asset(let id): return try bytes(of: id, range: part)
    case .motion(let id): return try motionVideoBytes(of: id, part: part)
    case .rendition(let path):
      let file = try InputFile(path)
      let range = part ?? 0..<file.size
      guard range.lowerBound >= 0, range.upperBound <= file.size else {
        throw DarkroomError(.invalidArgument, file: path, "no bytes \(range) in \(file.size)")
      }
      return try file.read(at: range.lowerBound, count: range.count)
    case .sealed(let id, let object):
      return try storage.keptPlaybackBytes(of: id, object: object, part: part)
    }
  }

  /// The upright box of `quality` for a video shown as `header` says (turned for portrait).
  static func playbackBox(_ quality: PlaybackQuality, _ header: VideoHeader) -> (Int, Int) {
    let (long, short) = quality.box
    return header.displayHeight > header.displayWidth ? (short, long) : (long, short)
  }

  /// Whether every browser plays the video as it is: H.264 with AAC or no sound, in MP4,
  /// not HDR, within `box` (upright).
  static func playsAnywhere(_ header: VideoHeader, box: (Int, Int)) -> Bool {
    let hdr = header.colour.map { $0.transfer == 16 || $0.transfer == 18 || $0.primaries == 9 }
    return ["mp4", "m4v"].contains(header.format)
      && ["avc1", "avc3"].contains(header.codec ?? "")
      && (header.soundCodec == nil || header.soundCodec == "mp4a") && hdr != true
      && header.displayWidth <= box.0 && header.displayHeight <= box.1
  }

  /// What a playback rendition of a video shown as `header` says is made to: fitted in
  /// `box`, turned upright, a fragmented MP4 (playable as it is written).
  static func playbackSettings(box: (Int, Int), _ header: VideoHeader, maxSeconds: Double)
    -> TranscodeSettings
  {
    var settings = TranscodeSettings(maxPixels: 0, maxSeconds: maxSeconds)
    (settings.boxWidth, settings.boxHeight) = box
    settings.rotation = header.rotation
    settings.fragmented = true
    return settings
  }

  /// The cache key of a playback rendition: its quality and what else decides its bytes.
  static func playbackKey(_ quality: PlaybackQuality) -> String {
    let material =
      "playback;\(quality.rawValue);h264-crf23-veryfast;render=\(Renderer.renderVersion)"
    return String(ContentHash.of(text: material).hex.prefix(20))
  }
}

extension Library {
  /// The playback version of asset `id` (``playback(of:quality:maxSeconds:progress:)``:
  /// made if the cache has none) written to `output`, whole and atomically, for a library
  /// whose assets are not files (a space's). Returns what was written.
  ///
  /// - Throws: as ``playback(of:quality:maxSeconds:progress:)``; `io` when `output`
  ///   cannot be written (it is then left as it was).
  package func writePlayback(
    of id: AssetID, to output: String, quality: PlaybackQuality = .medium,
    maxSeconds: Double = Library.playbackMaxSeconds,
    progress: @escaping @Sendable (_ done: Double, _ total: Double) -> Bool = { _, _ in true }
  ) throws(DarkroomError) -> Playback {
    let made = try playback(of: id, quality: quality, maxSeconds: maxSeconds, progress: progress)
    try AtomicFile.writing(to: output) { fd, _ throws(DarkroomError) in
      var offset = 0
      while offset < made.byteSize {
        let part = try playbackBytes(made, part: offset..<min(made.byteSize, offset + (4 << 20)))
        guard !part.isEmpty, part.withUnsafeBytes({ AtomicFile.writeAll(fd, $0) }) else {
          throw AtomicFile.writeError(output, errno)
        }
        offset += part.count
      }
    }
    return made
  }

  /// The playback version of the video file at `path` (see
  /// ``playback(of:quality:maxSeconds:progress:)``), written to `output` (atomically:
  /// the whole file or nothing; a video browsers play already is copied as it is), for files
  /// in no catalog. Returns what was written.
  ///
  /// - Throws: as ``playback(of:quality:maxSeconds:progress:)``; `io` when `output`
  ///   cannot be written (it is then left as it was).
  package static func writePlayback(
    ofFile path: String, to output: String, quality: PlaybackQuality = .medium,
    settings: PixelSettings = PixelSettings(), maxSeconds: Double = Library.playbackMaxSeconds,
    progress: @escaping @Sendable (_ done: Double, _ total: Double) -> Bool = { _, _ in true }
  ) throws(DarkroomError) -> Playback {
    let file = try InputFile(path)
    guard let header = try VideoHeader.describe(file, name: path) else {
      throw DarkroomError(.unsupportedFormat, file: path, "is not a video (MP4, MOV, M4V, 3GP)")
    }
    let box = playbackBox(quality, header)
    if playsAnywhere(header, box: box) {
      try AtomicFile.writing(to: output) { fd, _ throws(DarkroomError) in
        try file.copy(to: fd, name: output)
      }
      return Playback(
        source: .rendition(path: output), byteSize: file.size,
        mediaType: MotionPhoto.Video(path: path, range: nil, format: header.format).mediaType,
        width: header.displayWidth, height: header.displayHeight, cached: true)
    }
    let transcode = playbackSettings(box: box, header, maxSeconds: maxSeconds)
    let outcome = try AtomicFile.writing(to: output) { fd, _ throws(DarkroomError) in
      try Renderer(settings).transcode(
        .file(file), name: path, into: fd, transcode, graph: nil, progress: progress)
    }
    let size = (try? InputFile(output).size) ?? 0
    return Playback(
      source: .rendition(path: output), byteSize: size, mediaType: "video/mp4",
      width: outcome.width, height: outcome.height, cached: false)
  }
}

/// A playback found at once, or one being made (``Library/playbackStream(of:quality:)``).
package enum PlaybackStream: Sendable {
  case ready(Playback)
  case growing(GrowingPlayback)
}

/// A playback rendition being made: a fragmented MP4 whose bytes can be read as they are
/// written, and which ends whole in the cache, or fails.
package final class GrowingPlayback: Sendable {
  /// The renditions being made in this process, by ``PlaybackStore/flightKey``.
  static let inFlight = Locked<[String: GrowingPlayback]>([:])

  private struct State {
    /// A duplicate (closed on exec) of the descriptor of the file the rendition is written
    /// to: the cache's temporary file (the same file after its rename too), or a space's
    /// memory file, once it is open.
    var fd: Int32 = -1
    var outcome: Result<Playback, DarkroomError>?
  }
  private let state = Locked(State())

  /// Its media type.
  package let mediaType = "video/mp4"

  deinit {
    let fd = state.withLock { $0.fd }
    if fd >= 0 { close(fd) }
  }

  /// The rendition's file is open: its bytes can be read through a duplicate of `fd`.
  func attach(_ fd: Int32) {
    let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
    state.withLock { $0.fd = copy }
  }

  func finish(_ outcome: Result<Playback, DarkroomError>) {
    // Found made (by another process, or another door here) before this one could start:
    // its bytes are read from the cache's file.
    var opened: Int32 = -1
    if case .success(let playback) = outcome, case .rendition(let path) = playback.source,
      state.withLock({ $0.fd }) < 0
    {
      opened = open(path, O_RDONLY | O_CLOEXEC)
    }
    state.withLock {
      if $0.fd < 0 { $0.fd = opened } else if opened >= 0 { close(opened) }
      $0.outcome = outcome
    }
  }

  /// What was made, once it is done (nil while it is made).
  package var outcome: Result<Playback, DarkroomError>? { state.withLock { $0.outcome } }

  /// Up to `count` bytes from `offset`, as soon as there are any; empty once the rendition
  /// is whole and all of it was read. Waits (a look every 40 ms) while it is made.
  ///
  /// - Throws: what making the rendition threw; `engine` when the task is cancelled.
  package func read(from offset: Int, count: Int) async throws(DarkroomError) -> [UInt8] {
    guard offset >= 0, count > 0 else { return [] }
    while true {
      let (fd, outcome) = state.withLock { ($0.fd, $0.outcome) }
      if case .failure(let error) = outcome { throw error }
      if fd >= 0 {
        var info = stat()
        if fstat(fd, &info) == 0, Int(info.st_size) > offset {
          let wanted = min(count, Int(info.st_size) - offset)
          var bytes = [UInt8](repeating: 0, count: wanted)
          let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, wanted, off_t(offset)) }
          if n > 0 { return Array(bytes.prefix(n)) }
        }
        // Nothing more, and nothing more to come.
        if outcome != nil { return [] }
      } else if case .success = outcome {
        throw DarkroomError(.io, "the playback rendition was made but cannot be read")
      }
      do {
        try await Task.sleep(for: .milliseconds(40))
      } catch {
        throw DarkroomError(.engine, "stopped: the reader of a playback rendition went away")
      }
    }
  }
}

extension GrowingPlayback {
  /// Bytes `start...end` of the rendition as soon as they are written (for no `end`: what
  /// is written from `start` when there is any, up to `most` bytes): fewer only where the
  /// rendition ends first, none past its end. With them, its size once it is whole (nil
  /// while it is made).
  ///
  /// - Throws: what making the rendition threw; `engine` when the task is cancelled.
  package func part(from start: Int, through end: Int?, most: Int = 1 << 20)
    async throws(DarkroomError) -> (bytes: [UInt8], total: Int?)
  {
    let wanted = end.map { $0 + 1 - start } ?? most
    var bytes = try await read(from: start, count: wanted)
    while end != nil, !bytes.isEmpty, bytes.count < wanted {
      let piece = try await read(from: start + bytes.count, count: wanted - bytes.count)
      if piece.isEmpty { break }
      bytes += piece
    }
    guard case .success(let made) = outcome else { return (bytes, nil) }
    return (bytes, made.byteSize)
  }

  /// The rendition, once it is whole (a look every 40 ms).
  ///
  /// - Throws: what making it threw; `engine` when the task is cancelled.
  package func whole() async throws(DarkroomError) -> Playback {
    while true {
      switch outcome {
      case .success(let made): return made
      case .failure(let error): throw error
      case nil:
        do {
          try await Task.sleep(for: .milliseconds(40))
        } catch {
          throw DarkroomError(.engine, "stopped: the reader of a playback rendition went away")
        }
      }
    }
  }
}

/// Where a playback rendition is kept.
enum PlaybackStore {
  /// The library's rendition cache, under the video's content hash and the quality's key.
  case cache(RenditionCache, content: ContentHash, key: String)
  /// A space, sealed as object `object` (a keyed name) of the asset.
  case space(Space, SpaceAsset, AssetID, object: String)

  /// What tells one rendition being made in this process from another.
  var flightKey: String {
    switch self {
    case .cache(_, let content, let key): content.hex + "/" + key
    case .space(let space, _, _, let object): space.folder + "/" + object
    }
  }
}

/// What a playback of one video takes (``Library/playbackStream(of:quality:)``).
struct PlaybackPlan {
  /// Runs an encode with the video's bytes, opened (a space's: decrypted) for it only.
  typealias WithVideo = (
    _ encode: (VideoBytes) throws(DarkroomError) -> TranscodeOutcome
  ) throws(DarkroomError) -> TranscodeOutcome
  var withVideo: WithVideo
  var name: String
  var original: Playback.Source
  var mediaType: String
  var header: VideoHeader
  var size: Int
  var box: (Int, Int)
  var store: PlaybackStore

  /// The playback there is without an encode: the file itself, or the cache's rendition.
  func ready() -> Playback? {
    if Library.playsAnywhere(header, box: box) {
      return Playback(
        source: original, byteSize: size, mediaType: mediaType, width: header.displayWidth,
        height: header.displayHeight, cached: true)
    }
    switch store {
    case .cache(let cache, let content, let key):
      return cache.lookup(source: content, key: key).map {
        Playback(
          source: .rendition(path: $0.path), byteSize: $0.byteCount, mediaType: "video/mp4",
          width: $0.width, height: $0.height, cached: true)
      }
    case .space(let space, let asset, let id, let object):
      return space.cachedPlayback(object, of: asset).map {
        Playback(
          source: .sealed(id, object: object), byteSize: $0.byteSize, mediaType: "video/mp4",
          width: $0.width, height: $0.height, cached: true)
      }
    }
  }

  /// Makes the rendition (in a sandboxed worker where videos go to workers) under the cache's
  /// lock for it, unless another process made it meanwhile; its bytes are readable through
  /// `growing` as they are written.
  func make(
    maxSeconds: Double, progress: @escaping @Sendable (Double, Double) -> Bool,
    growing: GrowingPlayback?
  ) throws(DarkroomError) -> Playback {
    let settings = Library.playbackSettings(box: box, header, maxSeconds: maxSeconds)
    guard case .cache(let cache, let content, let key) = store else {
      return try makeSealed(settings, progress: progress, growing: growing)
    }
    let made: Result<Playback, DarkroomError>
    do {
      made = try cache.withLock(source: content, key: key) {
        () -> Result<Playback, DarkroomError> in
        if let playback = ready() { return .success(playback) }
        return Result { () throws(DarkroomError) in
          let entry = try cache.store(
            source: content, key: key, kind: "playback", edit: "original", fileExtension: "mp4"
          ) { fd throws(DarkroomError) in
            growing?.attach(fd)
            let outcome = try withVideo { video throws(DarkroomError) in
              try Renderer(PixelSettings()).transcode(
                video, name: name, into: fd, settings, graph: nil, progress: progress)
            }
            return (outcome.width, outcome.height)
          }
          return Playback(
            source: .rendition(path: entry.path), byteSize: entry.byteCount,
            mediaType: "video/mp4", width: entry.width, height: entry.height, cached: false)
        }
      }
    } catch let error as DarkroomError {
      throw error
    } catch {
      throw DarkroomError(.io, file: name, "cannot cache its playback rendition: \(error)")
    }
    return try made.get()
  }

  /// Makes a space's rendition: into a file in memory (by the space's own workers, where
  /// videos go to workers), readable through `growing` as it is written, then sealed.
  /// Two processes may make the same one at once: each seals its own, and the first sealed
  /// stays.
  private func makeSealed(
    _ settings: TranscodeSettings, progress: @escaping @Sendable (Double, Double) -> Bool,
    growing: GrowingPlayback?
  ) throws(DarkroomError) -> Playback {
    guard case .space(let space, let asset, let id, let object) = store else {
      throw DarkroomError(.engine, file: name, "a library's playback is not a space's")
    }
    let fd = try MemoryFile.create("darkroom-playback", file: name)
    defer { close(fd) }
    growing?.attach(fd)
    // A lock stops the encode at its next report (the space's workers end with it).
    let outcome = try withVideo { video throws(DarkroomError) in
      try space.ownRenderer(Renderer(PixelSettings())).transcode(
        video, name: name, into: fd, settings, graph: nil,
        progress: { done, total in progress(done, total) && !space.isClosed })
    }
    try space.storePlayback(
      object, of: asset, memoryFile: fd, width: outcome.width, height: outcome.height)
    // Another process's, if it was sealed first (the first made is kept).
    guard let kept = space.cachedPlayback(object, of: asset) else {
      throw DarkroomError(.io, file: name, "its playback rendition was sealed but cannot be read")
    }
    return Playback(
      source: .sealed(id, object: object), byteSize: kept.byteSize, mediaType: "video/mp4",
      width: kept.width, height: kept.height, cached: false)
  }
}

/// A plan handed to the thread that makes its rendition (its open file is used there only).
private final class UncheckedPlan: @unchecked Sendable {
  let plan: PlaybackPlan
  init(_ plan: PlaybackPlan) { self.plan = plan }
}
