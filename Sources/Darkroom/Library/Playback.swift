import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#endif

/// How large a video is delivered for playback, as PhotoKit's delivery modes: the box its
/// frames fit in, long side by short side (a portrait video's is turned). Never scaled up.
///
/// `PlaybackQuality` is a `Sendable` value type.
public enum PlaybackQuality: String, Sendable, Codable, CaseIterable {
  /// 854x480.
  case fast
  /// 1280x720.
  case medium
  /// 1920x1080.
  case high

  /// The box, long side by short side.
  public var box: (long: Int, short: Int) {
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
public struct Playback: Sendable, Equatable {
  /// Where the bytes are.
  public enum Source: Sendable, Equatable {
    /// The asset's own file.
    case asset(AssetID)
    /// The video of a live or motion photo, as it is.
    case motion(AssetID)
    /// A rendition in the library's cache.
    case rendition(path: String)
  }

  public var source: Source
  /// How many bytes it has.
  public var byteSize: Int
  /// `video/mp4`, or the original's media type.
  public var mediaType: String
  /// The frames' size as shown.
  public var width: Int
  public var height: Int
  /// The rendition was in the cache already (for the file as it is: true).
  public var cached: Bool

  /// Whether it is the file as it is, not a rendition.
  public var isOriginal: Bool {
    if case .rendition = source { return false }
    return true
  }
}

extension Library {
  /// The longest video a playback rendition is made of, unless the caller says otherwise.
  public static let playbackMaxSeconds = TranscodeSettings.defaultMaxSeconds

  /// A version of asset `id`'s video (with `motion`, of a live or motion photo's video) that
  /// every browser plays, at `quality`: the file itself when browsers play it already, else
  /// a rendition, made now (in a sandboxed worker where videos go to workers) if the cache
  /// has none. `progress` is told the seconds encoded and in all; false stops the encode.
  ///
  /// - Throws: A ``DarkroomError`` about the video: `notFound` for an asset or video that
  ///   is not there; `invalidArgument` for a photo (without `motion`), or a space's video
  ///   (not made yet); `corrupt` for damage; `tooLarge` for frames over the library's pixel
  ///   limit or a video longer than `maxSeconds`; `unsupportedFormat` for a codec FFmpeg
  ///   does not decode; `io` when the cache cannot be written. Nothing partial is cached.
  public func playback(
    of id: AssetID, quality: PlaybackQuality = .medium, motion: Bool = false,
    maxSeconds: Double = Library.playbackMaxSeconds,
    progress: @escaping @Sendable (_ done: Double, _ total: Double) -> Bool = { _, _ in true }
  ) throws(DarkroomError) -> Playback {
    guard space == nil else {
      throw DarkroomError(
        .invalidArgument, file: id.rawValue,
        "playback renditions are not made of a space's videos yet: play its video as it is")
    }
    let asset = try asset(id)
    let video: VideoBytes
    let name: String
    let original: Playback.Source
    let mediaType: String
    if motion {
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
      guard asset.mediaType == .video else {
        throw DarkroomError(
          .invalidArgument, file: asset.name,
          "is a photo: playback is of videos (and, with motion, of a live photo's video)")
      }
      let file = try openFile(of: asset, exactly: false)
      (video, name, original) = (.file(file), asset.path, .asset(id))
      mediaType = MotionPhoto.Video(path: asset.path, range: nil, format: asset.format).mediaType
    }
    let header: VideoHeader
    let content: ContentHash
    let size: Int
    switch video {
    case .file(let file):
      header = try VideoHeader.read(ByteSource(file: file), name: name)
      content = try RenditionCache(folder: cacheFolder).contentHash(ofFile: file.path)
      size = file.size
    case .memory(let bytes):
      header = try VideoHeader.read(ByteSource(memory: bytes), name: name)
      content = ContentHash.of(bytes: bytes)
      size = bytes.count
    }
    let box = Self.playbackBox(quality, header)
    if Self.playsAnywhere(header, box: box) {
      return Playback(
        source: original, byteSize: size, mediaType: mediaType, width: header.displayWidth,
        height: header.displayHeight, cached: true)
    }
    let cache = RenditionCache(folder: cacheFolder)
    let key = Self.playbackKey(quality)
    func found() -> Playback? {
      cache.lookup(source: content, key: key).map {
        Playback(
          source: .rendition(path: $0.path), byteSize: $0.byteCount, mediaType: "video/mp4",
          width: $0.width, height: $0.height, cached: true)
      }
    }
    if let playback = found() { return playback }
    let made: Result<Playback, DarkroomError>
    do {
      made = try cache.withLock(source: content, key: key) {
        () -> Result<Playback, DarkroomError> in
        if let playback = found() { return .success(playback) }
        return Result { () throws(DarkroomError) in
          var settings = TranscodeSettings(maxPixels: 0, maxSeconds: maxSeconds)
          (settings.boxWidth, settings.boxHeight) = box
          settings.rotation = header.rotation
          let entry = try cache.store(
            source: content, key: key, kind: "playback", edit: "original", fileExtension: "mp4"
          ) { fd throws(DarkroomError) in
            let outcome = try renderer().transcode(
              video, name: name, into: fd, settings, graph: nil, progress: progress)
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

  /// Bytes `part` of a playback (all of it for nil), read as ``playback(of:quality:motion:maxSeconds:progress:)``
  /// found them: the asset's file, a photo's video, or the cached rendition.
  public func playbackBytes(_ playback: Playback, part: Range<Int>? = nil) throws(DarkroomError)
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
    }
  }

  /// The renderer of this library's work, with its limits.
  private func renderer() -> Renderer { Renderer(PixelSettings()) }

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

  /// The cache key of a playback rendition: its quality and what else decides its bytes.
  static func playbackKey(_ quality: PlaybackQuality) -> String {
    let material =
      "playback;\(quality.rawValue);h264-crf23-veryfast;render=\(Renderer.renderVersion)"
    return String(ContentHash.of(text: material).hex.prefix(20))
  }
}

extension Library {
  /// The playback version of the video file at `path` (see
  /// ``playback(of:quality:motion:maxSeconds:progress:)``), written to `output` (atomically:
  /// the whole file or nothing; a video browsers play already is copied as it is), for files
  /// in no catalog. Returns what was written.
  ///
  /// - Throws: as ``playback(of:quality:motion:maxSeconds:progress:)``; `io` when `output`
  ///   cannot be written (it is then left as it was).
  public static func writePlayback(
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
        var offset = 0
        while offset < file.size {
          let chunk = try file.read(at: offset, count: min(1 << 22, file.size - offset))
          guard !chunk.isEmpty,
            chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == chunk.count
          else {
            throw DarkroomError(
              .io, file: output, "cannot write: \(String(cString: strerror(errno)))")
          }
          offset += chunk.count
        }
      }
      return Playback(
        source: .rendition(path: output), byteSize: file.size,
        mediaType: MotionPhoto.Video(path: path, range: nil, format: header.format).mediaType,
        width: header.displayWidth, height: header.displayHeight, cached: true)
    }
    var transcode = TranscodeSettings(maxPixels: 0, maxSeconds: maxSeconds)
    (transcode.boxWidth, transcode.boxHeight) = box
    transcode.rotation = header.rotation
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
